#!/usr/bin/env node
// Builds the package's compiled form into dist/ (docs/package.md), so plain `node` can import it:
//   dist/index.js, hdl-gen.js, cosim.js   the entries of `exports` (ESM, one bundle each, shared
//                                         code in chunk-*.js; zod stays an import)
//   dist/cli.js                           the `rnic` command of an installed package (bin/rnic.mjs)
//   dist/types/**.d.ts                    declarations from tsc, with relative imports given the
//                                         `.js` endings Node's ESM resolution (node16, nodenext) needs
// The sources import without extensions ('../ts-model/mpa'), which tsc's own output keeps and
// Node cannot load: hence the bundle. A no-op when dist/ was built from the same inputs (a hash
// of them is kept in dist/.build-key); `npm pack` runs it (prepack), so a fresh clone packs.
//
//   node scripts/build.mjs [--force]
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DIST = join(ROOT, 'dist');
const KEY_FILE = '.build-key';

/** dist/<name>.js from each source; package.json's `exports` and bin/rnic.mjs name these files. */
export const ENTRIES = Object.freeze({ index: 'ts-model/index.ts', 'hdl-gen': 'hdl-gen/index.ts', cosim: 'sim/index.ts', cli: 'cli/main.ts' });
/** Every folder an entry can reach. */
const SOURCE_DIRS = ['ts-model', 'hdl-gen', 'sim', 'flow', 'cli'];
/** Files that change the output besides the sources. */
const CONFIG_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs'];

const require = createRequire(import.meta.url);

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts')) yield p;
  }
}

/** A hash of everything the build reads, and the tools' versions. */
function inputsKey() {
  const h = createHash('sha256');
  const files = [...SOURCE_DIRS.flatMap((d) => [...tsFiles(join(ROOT, d))]), ...CONFIG_FILES.map((f) => join(ROOT, f))];
  for (const f of files) h.update(relative(ROOT, f)).update('\0').update(readFileSync(f)).update('\0');
  h.update(`esbuild ${require('esbuild/package.json').version} typescript ${require('typescript/package.json').version}`);
  return h.digest('hex');
}

function* dtsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* dtsFiles(p);
    else if (e.name.endsWith('.d.ts')) yield p;
  }
}

/**
 * `from './x'` → `from './x.js'` (or './x/index.js') in every declaration file: under node16 and
 * nodenext an extensionless relative import in an ESM .d.ts does not resolve, and with skipLibCheck
 * its types would silently become `any`. An import that names no emitted file fails the build.
 */
function addJsExtensions(typesDir) {
  // A bare '.' or '..' too: tsc writes `import("..")` for a type it reaches through a folder's index.
  const spec = /(\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)(['"])(\.{1,2}(?:\/[^'"]*)?)\2/g;
  for (const file of dtsFiles(typesDir)) {
    const text = readFileSync(file, 'utf8');
    // Code lines only: a doc comment may quote an import (`from './hdl-gen'`).
    const out = text.split('\n').map((line) => (/^\s*(\*|\/\*|\/\/)/.test(line) ? line : line.replace(spec, (whole, lead, q, s) => {
      if (s.endsWith('.js')) return whole;
      const at = resolve(dirname(file), s);
      if (s !== '.' && s !== '..' && existsSync(`${at}.d.ts`)) return `${lead}${q}${s}.js${q}`;
      if (existsSync(join(at, 'index.d.ts'))) return `${lead}${q}${s}/index.js${q}`;
      throw new Error(`${relative(typesDir, file)}: cannot resolve ${s} among the emitted declarations`);
    }))).join('\n');
    if (out !== text) writeFileSync(file, out);
  }
}

/**
 * Replaces dist/ with the finished build. A build of the same inputs by another process that got
 * there first is as good as ours; one of other inputs is replaced.
 */
function publish(tmp, key) {
  for (let attempt = 0; ; attempt++) {
    rmSync(DIST, { recursive: true, force: true });
    try {
      renameSync(tmp, DIST);
      return;
    } catch (e) {
      if (e.code !== 'ENOTEMPTY' && e.code !== 'EEXIST') throw e;
      if (existsSync(join(DIST, KEY_FILE)) && readFileSync(join(DIST, KEY_FILE), 'utf8').trim() === key) return rmSync(tmp, { recursive: true, force: true });
      if (attempt === 2) throw e;
    }
  }
}

export async function buildPackage({ force = false, log = (s) => process.stdout.write(`${s}\n`) } = {}) {
  const key = inputsKey();
  const keyFile = join(DIST, KEY_FILE);
  if (!force && existsSync(keyFile) && readFileSync(keyFile, 'utf8').trim() === key) {
    log('build: dist/ is up to date');
    return { built: false };
  }
  const started = performance.now();
  // Built beside dist/ (same depth, so the source maps' ../ paths hold) and renamed into place.
  const tmp = mkdtempSync(join(ROOT, '.dist-tmp-'));
  chmodSync(tmp, 0o755); // mkdtemp makes it private; dist/ is an ordinary directory
  try {
    const { build } = await import('esbuild');
    await build({
      absWorkingDir: ROOT,
      entryPoints: Object.fromEntries(Object.entries(ENTRIES).map(([name, src]) => [name, join(ROOT, src)])),
      outdir: tmp,
      bundle: true,
      splitting: true,
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // Dependencies (zod) are imported, not copied: npm installs them beside the package.
      packages: 'external',
      // Every file in dist/ directly: `new URL('../package.json', import.meta.url)` (cli/main.ts)
      // means the package root from any of them.
      chunkNames: 'chunk-[hash]',
      sourcemap: 'linked',
      logLevel: 'warning',
    });
    const tsc = spawnSync(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--declarationDir', join(tmp, 'types')], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    if (tsc.status !== 0) throw new Error(`tsc -p tsconfig.build.json failed (${tsc.error?.message ?? `exit status ${tsc.status}`}):\n${tsc.stdout}${tsc.stderr}`);
    addJsExtensions(join(tmp, 'types'));
    writeFileSync(join(tmp, KEY_FILE), `${key}\n`);
    publish(tmp, key);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  log(`build: dist/ built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { built: true };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    await buildPackage({ force: process.argv.includes('--force') });
  } catch (e) {
    process.stderr.write(`build: error: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  }
}
