import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script without types
import { formatSummary, summarize } from '../../scripts/test-summary.mjs';

const REPO = new URL('../..', import.meta.url).pathname;
const DIR = join(REPO, '.cache', 'test-summary-fixture');

/** A real vitest run over three files: one does not load, one has a failing beforeAll, one passes. */
function runFixture(): unknown {
  rmSync(DIR, { recursive: true, force: true });
  mkdirSync(DIR, { recursive: true });
  writeFileSync(join(DIR, 'no-load.test.ts'), "import './missing-module';\nimport { it } from 'vitest';\nit('never runs', () => {});\n");
  writeFileSync(
    join(DIR, 'before-all.test.ts'),
    "import { beforeAll, describe, it } from 'vitest';\ndescribe('s', () => {\n  beforeAll(() => { throw new Error('boom'); });\n  it('a', () => {});\n  it('b', () => {});\n});\n",
  );
  writeFileSync(join(DIR, 'fine.test.ts'), "import { it } from 'vitest';\nit('passes', () => {});\n");
  writeFileSync(join(DIR, 'vitest.config.ts'), "export default { test: { include: ['*.test.ts'] } };\n");
  const out = join(DIR, 'report.json');
  spawnSync(process.execPath, [join(REPO, 'node_modules/vitest/vitest.mjs'), 'run', '--root', DIR, '--reporter=json', `--outputFile.json=${out}`], { cwd: DIR, encoding: 'utf8' });
  return JSON.parse(readFileSync(out, 'utf8'));
}

describe('the closing line of make test', () => {
  afterAll(() => rmSync(DIR, { recursive: true, force: true }));

  it('counts a file that fails to load and a failing beforeAll as failed, not as passed or skipped', () => {
    const s = summarize(runFixture());
    expect(s.passed).toBe(1);
    // no-load: 1 (no tests known); before-all: its 2 tests never ran.
    expect(s.failed).toBe(3);
    expect(s.skipped).toBe(0);
    expect(s.brokenFiles.map((f: { name: string }) => f.name.split('/').pop()).sort()).toEqual(['before-all.test.ts', 'no-load.test.ts']);
    const text = formatSummary(s);
    expect(text).toMatch(/missing-module/);
    expect(text.split('\n').pop()).toBe('1 passed, 3 failed');
  });

  it('prints a failing line when there is no report at all', () => {
    const r = spawnSync(process.execPath, [join(REPO, 'scripts/test-summary.mjs'), join(DIR, 'no-such-report.json')], { encoding: 'utf8' });
    expect(r.stdout).toMatch(/0 passed, 1 failed/);
  });
});
