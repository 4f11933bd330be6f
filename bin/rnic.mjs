#!/usr/bin/env node
// The `rnic` command. In a checkout it runs the TypeScript CLI through tsx's loader, so `npx rnic`
// works right after `npm ci` and always runs the sources as they are; an installed package ships
// no sources, only the compiled CLI (dist/cli.js, scripts/build.mjs), which plain node runs.
// RNIC_CLI_BUNDLE names a bundle of the checkout's CLI made from the same sources: the test suite
// makes one at its start (test/support/cli-bundle.ts) because loading the sources through tsx
// costs about 3 s of CPU a start, the bundle 0.6 s, and the tests start the command often.
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const sources = new URL('../cli/main.ts', import.meta.url);
const bundle = process.env.RNIC_CLI_BUNDLE;
let main;
if (existsSync(sources) && bundle) {
  ({ main } = await import(pathToFileURL(bundle).href));
} else if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import('../dist/cli.js'));
}
process.exitCode = await main(process.argv.slice(2));
