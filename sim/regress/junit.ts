import type { RegressResult } from './run';

/**
 * JUnit XML of a regression (the format CI systems collect: Jenkins, GitLab, GitHub Actions
 * reporters): one testsuite, one testcase per run with its time; a failed run carries its first
 * difference, cycle and replay command, a scenario the RTL refuses by name is skipped.
 */
export function junitXml(results: readonly RegressResult[], suite: { readonly name: string; readonly seconds: number }): string {
  const failures = results.filter((r) => r.status === 'fail').length;
  const skipped = results.filter((r) => r.status === 'refused').length;
  const cases = results.map((r) => {
    const open = `  <testcase classname="rnic.regress" name="${xml(r.run.name)}" time="${r.seconds}"`;
    if (r.status === 'pass') return `${open}/>`;
    if (r.status === 'refused') return `${open}>\n    <skipped message="${xml(r.detail)}"/>\n  </testcase>`;
    const at = r.cycle !== null ? ` at cycle ${r.cycle}` : '';
    return `${open}>\n    <failure message="${xml(r.detail + at)}">${xml(`${r.detail}${at}\nreplay: ${r.replay}`)}</failure>\n  </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="${xml(suite.name)}" tests="${results.length}" failures="${failures}" errors="0" skipped="${skipped}" time="${suite.seconds}">`,
    ...cases,
    '</testsuite>',
    '',
  ].join('\n');
}

/** Text as XML character data or an attribute value (no control characters but tab and newline). */
function xml(s: string): string {
  return s
    .replace(/[^\t\n\x20-\uD7FF\uE000-\uFFFD]/gu, '?')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}
