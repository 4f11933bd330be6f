/**
 * vitest's global setup: the `rnic` command the tests start (bin/rnic.mjs), bundled once from the
 * checkout's sources for this run. Loading cli/main.ts through tsx costs about 3 s of CPU a start
 * (it transpiles the whole model, generator and co-simulation), the bundle about 0.6 s, and the
 * suite starts the command over a hundred times on a 2-core machine. The bundle is made with the
 * package's own bundler settings (scripts/build.mjs, without its declaration step) into a
 * directory of this run inside the checkout (`.cache/cli/`, whatever RNIC_CACHE_DIR says: the
 * bundle imports its dependencies, zod, from the checkout's node_modules), and RNIC_CLI_BUNDLE,
 * which the workers inherit, tells bin/rnic.mjs to run it. A user's `npx rnic` still runs the
 * sources through tsx.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { PACKAGE_ROOT } from '../../hdl-gen/gen/paths';

export default async function setup(): Promise<() => void> {
  const parent = join(PACKAGE_ROOT, '.cache', 'cli');
  mkdirSync(parent, { recursive: true });
  const dir = mkdtempSync(join(parent, 'run-'));
  await build({
    absWorkingDir: PACKAGE_ROOT,
    entryPoints: { cli: join(PACKAGE_ROOT, 'cli', 'main.ts') },
    outdir: dir,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    logLevel: 'warning',
  });
  process.env.RNIC_CLI_BUNDLE = join(dir, 'cli.js');
  return () => rmSync(dir, { recursive: true, force: true });
}
