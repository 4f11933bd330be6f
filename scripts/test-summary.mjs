// The closing line of `make test`: "N passed, N failed" from vitest's JSON report, counting what
// vitest's own totals leave out. A test file that fails to load, or a suite whose beforeAll or
// afterAll throws, ends with no failed test (its tests are reported as skipped or not at all):
// each such file counts its tests that did not pass as failed, and at least one.
import { readFileSync } from 'node:fs';

/** @param {any} report vitest's JSON report; @returns {{ passed: number, failed: number, skipped: number, brokenFiles: { name: string, message: string }[] }} */
export function summarize(report) {
  let failed = report.numFailedTests;
  let skipped = report.numPendingTests + (report.numTodoTests ?? 0);
  const brokenFiles = [];
  for (const file of report.testResults ?? []) {
    if (file.status !== 'failed') continue;
    const results = file.assertionResults ?? [];
    if (results.some((a) => a.status === 'failed')) continue;
    const notPassed = results.filter((a) => a.status !== 'passed').length;
    failed += Math.max(1, notPassed);
    skipped -= notPassed;
    brokenFiles.push({ name: file.name, message: (file.message || 'a suite-level error').split('\n')[0] });
  }
  return { passed: report.numPassedTests, failed, skipped: Math.max(0, skipped), brokenFiles };
}

export function formatSummary(s) {
  const lines = s.brokenFiles.map((f) => `failed outside a test: ${f.name}: ${f.message}`);
  lines.push(`${s.passed} passed, ${s.failed} failed${s.skipped ? `, ${s.skipped} skipped` : ''}`);
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  try {
    console.log(formatSummary(summarize(JSON.parse(readFileSync(process.argv[2], 'utf8')))));
  } catch (e) {
    // No report: vitest died before writing it. Never print a passing line then.
    console.log(`no test report (${e.code ?? e.message}): 0 passed, 1 failed`);
  }
}
