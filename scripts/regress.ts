/**
 * The long co-simulation regression (`make regress`; minutes, not part of `make test`): the whole
 * RNIC, every block and the receive path against the model at 8 and 64 octets with faults, and
 * every example scenario with the RTL as its responder, from one seed (sim/regress/plan.ts).
 *
 *   REGRESS_SEED=N  replays a run (default 1); REGRESS_SCALE=K multiplies the workload (default 1).
 */
import { regressPlan } from '../sim/regress/plan';
import { runRegress } from '../sim/regress/run';

const seed = Number(process.env.REGRESS_SEED ?? 1);
const scale = Number(process.env.REGRESS_SCALE ?? 1);
let failed = 0;
let refused = 0;
const t0 = performance.now();
for (const run of regressPlan(scale)) {
  const r = runRegress(run, seed);
  if (r.status === 'pass') console.log(`PASS  ${run.name} (${r.seconds} s)`);
  else if (r.status === 'refused') {
    refused++;
    console.log(`SKIP  ${run.name}: refused by name: ${r.detail}`);
  } else {
    failed++;
    console.log(`FAIL  ${run.name} (${r.seconds} s): ${r.detail}${r.cycle !== null ? ` at cycle ${r.cycle}` : ''}\n      replay with: ${r.replay}`);
  }
}
console.log(`regression (seed ${seed}): ${failed} failed, ${refused} scenarios refused by name, ${Math.round((performance.now() - t0) / 1000)} s`);
process.exitCode = failed > 0 ? 1 : 0;
