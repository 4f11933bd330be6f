import { describe, expect, test } from 'vitest';
import { junitXml } from '../../sim/regress/junit';
import { regressPlan } from '../../sim/regress/plan';
import type { RegressResult } from '../../sim/regress/run';
import { parseShard, shardOf } from '../../sim/regress/shard';

describe('make regress SHARD=i/n', () => {
  test('n shards run the plan once: every run on exactly one shard, in plan order', () => {
    const plan = regressPlan();
    for (const n of [1, 2, 3, 4, 7, plan.length, plan.length + 3]) {
      const shards = Array.from({ length: n }, (_, i) => shardOf(plan, parseShard(`${i + 1}/${n}`)));
      expect(shards.flat().map((r) => r.name).sort()).toEqual(plan.map((r) => r.name).sort());
      for (const s of shards) expect(s.map((r) => plan.indexOf(r))).toEqual([...s.map((r) => plan.indexOf(r))].sort((a, b) => a - b));
      // Balanced to one run.
      const sizes = shards.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
  });

  test.each(['0/4', '5/4', '1/0', 'a/b', '2', '', '1/2/3'])("'%s' is refused, echoing what was given", (text) => {
    expect(() => parseShard(text)).toThrow(new RegExp(`--shard must be i/n with 1 <= i <= n .*got '${text.replace(/\//g, '\\/')}'`));
  });
});

describe('JUnit XML of a regression', () => {
  const [a, b, c] = regressPlan().slice(0, 3);
  const results: RegressResult[] = [
    { run: a!, status: 'pass', seconds: 1.5, detail: '', cycle: null, cycles: 1000, cyclesPerSecond: 500, replay: 'npx rnic cosim x' },
    { run: b!, status: 'fail', seconds: 2, detail: 'QP 3: FPDU <0> & "tag"', cycle: 77, cycles: null, cyclesPerSecond: null, replay: 'npx rnic cosim --dut rnic --seed 1' },
    { run: c!, status: 'refused', seconds: 0.1, detail: 'a fault the RTL has no input for', cycle: null, cycles: null, cyclesPerSecond: null, replay: 'npx rnic cosim y' },
  ];
  const x = junitXml(results, { name: 'rnic regression seed 1', seconds: 4 });

  test('one testsuite with the counts, one testcase per run with its time', () => {
    expect(x).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuite name="rnic regression seed 1" tests="3" failures="1" errors="0" skipped="1" time="4">/);
    expect(x.match(/<testcase /g)).toHaveLength(3);
    expect(x).toContain(`<testcase classname="rnic.regress" name="${a!.name}" time="1.5"/>`);
    expect(x.trimEnd().endsWith('</testsuite>')).toBe(true);
  });

  test('a failure carries its difference, cycle and replay command, escaped; a refusal is skipped', () => {
    expect(x).toContain('<failure message="QP 3: FPDU &lt;0&gt; &amp; &quot;tag&quot; at cycle 77">');
    expect(x).toContain('replay: npx rnic cosim --dut rnic --seed 1</failure>');
    expect(x).toContain('<skipped message="a fault the RTL has no input for"/>');
    // Balanced elements: every testcase that opens closes.
    expect(x.match(/<testcase [^>]*[^/]>/g)!.length).toBe(x.match(/<\/testcase>/g)!.length);
  });
});
