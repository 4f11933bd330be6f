// Refreshes test/durations.json from the last run's report (.cache/vitest.json, written by
// scripts/test.sh): seconds per test file, which the sequencer (test/support/sequencer.ts) uses
// to start the slowest files first on a clone that has no vitest cache yet (CI).
// Usage: node scripts/test-durations.mjs [report.json]
import { readFileSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const report = JSON.parse(readFileSync(process.argv[2] ?? `${root}.cache/vitest.json`, 'utf8'));
const seconds = {};
for (const f of report.testResults ?? []) {
  // The report names files by absolute path, wherever the run was: keep the part from test/ on.
  const name = f.name.slice(f.name.lastIndexOf('/test/') + 1) || relative(root, f.name);
  seconds[name] = Math.round((f.endTime - f.startTime) / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort((a, b) => b[1] - a[1]));
writeFileSync(`${root}test/durations.json`, `${JSON.stringify(sorted, null, 1)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files`);
