import { execFile, spawnSync, type SpawnSyncOptions } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { cacheDir } from '../../hdl-gen/gen/paths';

/**
 * The package as a user gets it: packed (`npm pack` builds dist/ first, its prepack script),
 * installed into an empty project, imported by plain node (no tsx, no loader) and type-checked by
 * tsc as a consumer would.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const execFileAsync = promisify(execFile);

function run(cmd: string, args: readonly string[], opts: SpawnSyncOptions = {}): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', ...opts });
  if (r.error || r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.error?.message ?? `exit status ${r.status}`}):\n${String(r.stdout)}\n${String(r.stderr)}`);
  }
  return String(r.stdout);
}

let work = '';
let project = '';
let tarball = '';

/** Plain node: none of the test runner's options or loaders, the package's caches under `work`. */
function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, XDG_CACHE_HOME: join(work, 'xdg'), ...extra };
  delete env.NODE_OPTIONS;
  if (!('RNIC_CACHE_DIR' in extra)) delete env.RNIC_CACHE_DIR;
  return env;
}

/** Runs an ES module in the consumer project with plain node and returns what it printed as JSON. */
function node(code: string, extra: Record<string, string> = {}): unknown {
  return JSON.parse(run(process.execPath, ['--input-type=module', '-e', code], { cwd: project, env: plainEnv(extra) }));
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'rnic-package-'));
  run('npm', ['pack', '--pack-destination', work, '--no-fund'], { cwd: ROOT });
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  project = join(work, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), `${JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2)}\n`);
  // zod, the one dependency, comes from npm's cache (warm after npm ci) when it can.
  run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', tarball], { cwd: project });
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed and installed package', () => {
  test('holds the compiled entries, their declarations, the command and the docs; no sources, tests or caches', () => {
    const files = run('tar', ['-tzf', tarball]).split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    for (const f of ['package.json', 'README.md', 'LICENSE', 'bin/rnic.mjs', 'dist/index.js', 'dist/hdl-gen.js', 'dist/cosim.js', 'dist/cli.js',
      'dist/types/ts-model/index.d.ts', 'dist/types/hdl-gen/index.d.ts', 'dist/types/sim/index.d.ts', 'docs/package.md', 'examples/demo.json']) {
      expect(files, f).toContain(f);
    }
    expect(files.filter((f) => /^(test|cli|ts-model|hdl-gen|sim|flow|scripts|\.cache|rtl|node_modules)\//.test(f) || (f.endsWith('.ts') && !f.endsWith('.d.ts')))).toEqual([]);
    // The package's own dependencies only: tsx and the build tools are the checkout's.
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules', 'iwarp-rnic', 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(Object.keys(pkg.dependencies)).toEqual(['zod']);
    expect(existsSync(join(project, 'node_modules', 'tsx'))).toBe(false);
  });

  test('imports under plain node: CRC-32C, MPA framing and deframing, a scenario, and the Verilog of a block', () => {
    const out = node(`
      import { readFileSync } from 'node:fs';
      import { crc32c, MpaFramer, MpaDeframer, setUpConnection, parseScenario, runScenario } from 'iwarp-rnic';
      import { ModuleBuilder, emitVerilog, crc32cModule, generate, DEFAULT_CONFIG } from 'iwarp-rnic/hdl-gen';
      import { COSIM_DUTS, buildModel, openDut, SimModel } from 'iwarp-rnic/cosim';
      const conn = setUpConnection({ initiatorIsn: 0x12345678, responderIsn: 0x9abcdef0,
        initiator: { markers: true, crc: true, rtr: ['write'] }, responder: { markers: true, crc: true, rtr: ['write'] } });
      const fpdu = new MpaFramer(conn.initiatorToResponder).frame(new TextEncoder().encode('an iWARP ULPDU'));
      const events = [...new MpaDeframer(conn.initiatorToResponder).push(fpdu.wire)];
      const demo = parseScenario(JSON.parse(readFileSync('node_modules/iwarp-rnic/examples/demo.json', 'utf8')));
      const m = new ModuleBuilder('passthrough', 'A wire.');
      m.assign(m.output('y', 4), m.input('a', 4));
      console.log(JSON.stringify({
        crc: crc32c(new Uint8Array(32)),
        delivered: events.map((e) => e.kind === 'fpdu' ? new TextDecoder().decode(e.ulpdu) : e.kind),
        scenario: runScenario(demo).summary,
        block: emitVerilog(crc32cModule(8)),
        own: emitVerilog(m.build()),
        files: generate(DEFAULT_CONFIG).map((f) => f.path),
        cosim: [COSIM_DUTS.map((d) => d.name), typeof buildModel, typeof openDut, typeof SimModel.open],
      }));`) as Record<string, unknown>;
    expect(out.crc).toBe(0x8a9136aa); // RFC 3720 B.4: 32 octets of zeros
    expect(out.delivered).toEqual(['an iWARP ULPDU']);
    expect(out.scenario).toMatchObject({ connection: 'established', terminates: [] });
    expect(out.block).toMatch(/^module crc32c_w8 /m);
    expect(out.own).toMatch(/^module passthrough /m);
    expect(out.files).toContain('rnic.f');
    expect(out.cosim).toEqual([expect.arrayContaining(['rnic', 'crc32c']), 'function', 'function', 'function']);
  });

  test("reports a mistake in the user's hardware description at the user's line, not inside the bundle", () => {
    writeFileSync(
      join(project, 'bad-block.mjs'),
      `import { ModuleBuilder } from 'iwarp-rnic/hdl-gen';
const m = new ModuleBuilder('bad', 'A width mistake.');
const a = m.input('a', 8), b = m.input('b', 4);
try { a.add(b); } catch (e) { console.log(JSON.stringify({ name: e.name, message: e.message })); }
`,
    );
    const out = JSON.parse(run(process.execPath, ['bad-block.mjs'], { cwd: project, env: plainEnv() })) as { name: string; message: string };
    expect(out.name).toBe('HdlError');
    expect(out.message).toContain(`(at ${join(project, 'bad-block.mjs')}:4:`);
  });

  test('keeps its caches in RNIC_CACHE_DIR, else in the user cache directory, never inside the package', () => {
    const code = `
      import { cacheDir, PACKAGE_ROOT, moduleSources } from 'iwarp-rnic/hdl-gen';
      const src = moduleSources('crc32c_w8');
      console.log(JSON.stringify({ cache: cacheDir(), root: PACKAGE_ROOT, sources: src.sources }));`;
    const moved = join(work, 'moved-cache');
    const withVar = node(code, { RNIC_CACHE_DIR: moved }) as { cache: string; root: string; sources: string[] };
    expect(withVar.cache).toBe(moved);
    expect(withVar.root).toBe(join(project, 'node_modules', 'iwarp-rnic'));
    expect(withVar.sources.every((s) => s.startsWith(join(moved, 'gen')))).toBe(true);
    const byDefault = node(code) as { cache: string; sources: string[] };
    expect(byDefault.cache).toBe(join(work, 'xdg', 'iwarp-rnic'));
    expect(byDefault.sources.every((s) => s.startsWith(join(work, 'xdg', 'iwarp-rnic', 'gen')))).toBe(true);
  });

  test('runs the rnic command with plain node, no tsx', () => {
    const bin = join(project, 'node_modules', '.bin', 'rnic');
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    expect(run(bin, ['--version'], { cwd: project, env: plainEnv() }).trim()).toBe(`rnic ${version}`);
    const report = JSON.parse(run(bin, ['run', '--scenario', join(project, 'node_modules', 'iwarp-rnic', 'examples', 'demo.json'), '--json'], { cwd: project, env: plainEnv() })) as {
      summary: { connection: string };
    };
    expect(report.summary.connection).toBe('established');
  });

  test('co-simulates a generated block in Verilator from the installed package', () => {
    // The checkout's cache, so a Verilator build another test made is reused (and this one is kept).
    const out = node(
      `import { cosimCrc32c } from 'iwarp-rnic/cosim';
       const r = cosimCrc32c({ width: 8, seed: 1, frames: 40 });
       console.log(JSON.stringify({ mismatches: r.mismatches, frames: r.frames }));`,
      { RNIC_CACHE_DIR: cacheDir() },
    );
    expect(out).toEqual({ mismatches: 0, frames: 40 });
  });

  test('its declarations type-check in a consumer, with node16 and with bundler resolution', async () => {
    writeFileSync(
      join(project, 'check.ts'),
      `import { crc32c, MpaFramer, runScenario, type Scenario } from 'iwarp-rnic';
import { emitVerilog, crc32cModule, ModuleBuilder, type Module } from 'iwarp-rnic/hdl-gen';
import { buildModel, SimModel, cosimCrc32c, type CompiledModel } from 'iwarp-rnic/cosim';

/** skipLibCheck turns a declaration that does not resolve into \`any\`: every import must be typed. */
type IsAny<T> = 0 extends 1 & T ? true : false;
export const typed: [IsAny<typeof crc32c>, IsAny<typeof MpaFramer>, IsAny<Scenario>, IsAny<typeof runScenario>, IsAny<Module>,
  IsAny<typeof ModuleBuilder>, IsAny<typeof emitVerilog>, IsAny<typeof buildModel>, IsAny<CompiledModel>, IsAny<typeof SimModel>,
  IsAny<ReturnType<typeof cosimCrc32c>>] = [false, false, false, false, false, false, false, false, false, false, false];
export const crc: number = crc32c(new Uint8Array(32));
export const verilog: string = emitVerilog(crc32cModule(8));
// @ts-expect-error: the CRC is of octets, not text
crc32c('123456789');
`,
    );
    const check = async (name: string, compilerOptions: Record<string, unknown>): Promise<void> => {
      const config = join(project, `tsconfig.${name}.json`);
      writeFileSync(config, JSON.stringify({
        compilerOptions: { target: 'es2022', strict: true, noEmit: true, types: ['node'], typeRoots: [join(ROOT, 'node_modules', '@types')], ...compilerOptions },
        files: ['check.ts'],
      }));
      try {
        await execFileAsync(process.execPath, [TSC, '-p', config], { cwd: project });
      } catch (e) {
        const { stdout, stderr } = e as { stdout?: string; stderr?: string };
        throw new Error(`tsc (${name}) rejects the package's declarations:\n${stdout ?? ''}${stderr ?? ''}`);
      }
    };
    // node16: how Node itself resolves (every relative import in a .d.ts needs its .js); the
    // declarations checked too (skipLibCheck off), not only used. The two run side by side.
    await Promise.all([
      check('node16', { module: 'node16', moduleResolution: 'node16', skipLibCheck: false }),
      check('bundler', { module: 'esnext', moduleResolution: 'bundler', skipLibCheck: true }),
    ]);
  });
});
