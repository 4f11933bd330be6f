/**
 * The long co-simulation regression (`make regress`; minutes, not part of `make test`): the whole
 * RNIC, every block and the receive path against the model at 8 and 64 octets with faults, and
 * every example scenario with the RTL as its responder, from one seed (sim/regress/plan.ts).
 *
 *   npx tsx scripts/regress.ts [--shard i/n] [--junit FILE] [--seed N] [--scale K]
 *
 * --shard i/n runs every n-th run from run i − 1 (CI runners split the plan; together the n shards
 * run it once); --junit writes JUnit XML (default out/regress/junit[-i-of-n].xml); each run prints
 * a progress line (its place, result, time and simulation rate, the elapsed time); the last line
 * counts passes and failures. REGRESS_SEED and REGRESS_SCALE are the defaults of --seed and --scale.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import { junitXml } from '../sim/regress/junit';
import { regressPlan } from '../sim/regress/plan';
import { type RegressResult, runRegress } from '../sim/regress/run';
import { parseShard, shardOf } from '../sim/regress/shard';

function options() {
  try {
    const { values } = parseArgs({
      strict: true,
      options: {
        shard: { type: 'string' },
        junit: { type: 'string' },
        seed: { type: 'string', default: process.env.REGRESS_SEED ?? '1' },
        scale: { type: 'string', default: process.env.REGRESS_SCALE ?? '1' },
      },
    });
    const seed = Number(values.seed);
    const scale = Number(values.scale);
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`--seed must be a 32-bit unsigned integer, got '${values.seed}'`);
    if (!Number.isInteger(scale) || scale < 1) throw new RangeError(`--scale must be a positive integer, got '${values.scale}'`);
    const shard = values.shard !== undefined ? parseShard(values.shard) : null;
    const junit = values.junit ?? `out/regress/junit${shard ? `-${shard.index}-of-${shard.count}` : ''}.xml`;
    return { seed, scale, shard, junit };
  } catch (e) {
    process.stderr.write(`regress: ${(e as Error).message}\n`);
    process.exit(2);
  }
}

const { seed, scale, shard, junit } = options();
const plan = regressPlan(scale);
const runs = shard ? shardOf(plan, shard) : plan;
const label = shard ? `shard ${shard.index}/${shard.count}: ` : '';
console.log(`regression (seed ${seed}, scale ${scale}): ${label}${runs.length} of ${plan.length} runs`);
const results: RegressResult[] = [];
const t0 = performance.now();
const elapsed = () => Math.round((performance.now() - t0) / 1000);
runs.forEach((run, k) => {
  const r = runRegress(run, seed);
  results.push(r);
  const rate = r.cyclesPerSecond !== null ? `, ${r.cycles} cycles at ${(r.cyclesPerSecond / 1000).toFixed(0)} k cycles/s` : '';
  const place = `[${k + 1}/${runs.length}]`;
  if (r.status === 'pass') console.log(`${place} PASS  ${run.name} (${r.seconds} s${rate}) · ${elapsed()} s elapsed`);
  else if (r.status === 'refused') console.log(`${place} SKIP  ${run.name}: refused by name: ${r.detail} · ${elapsed()} s elapsed`);
  else console.log(`${place} FAIL  ${run.name} (${r.seconds} s): ${r.detail}${r.cycle !== null ? ` at cycle ${r.cycle}` : ''}\n      replay with: ${r.replay}`);
});
const count = (s: RegressResult['status']) => results.filter((r) => r.status === s).length;
mkdirSync(dirname(junit), { recursive: true });
writeFileSync(junit, junitXml(results, { name: `rnic regression seed ${seed}${shard ? ` shard ${shard.index}/${shard.count}` : ''}`, seconds: elapsed() }));
console.log(`regression (seed ${seed}): ${label}${count('pass')} passed, ${count('fail')} failed, ${count('refused')} scenarios refused by name, ${elapsed()} s; JUnit XML in ${junit}`);
process.exitCode = count('fail') > 0 ? 1 : 0;
