#!/usr/bin/env node
// The `rnic` command. In a checkout it runs the TypeScript CLI through tsx's loader, so `npx rnic`
// works right after `npm ci` and always runs the sources as they are; an installed package ships
// no sources, only the compiled CLI (dist/cli.js, scripts/build.mjs), which plain node runs.
import { existsSync } from 'node:fs';

const sources = new URL('../cli/main.ts', import.meta.url);
let main;
if (existsSync(sources)) {
  const { register } = await import('tsx/esm/api');
  register();
  ({ main } = await import(sources.href));
} else {
  ({ main } = await import('../dist/cli.js'));
}
process.exitCode = await main(process.argv.slice(2));
