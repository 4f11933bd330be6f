/**
 * How fast Verilator runs the bare top, with no harness: the floor under `rnic cosim`'s
 * simCyclesPerSecond. The top is reset, then ticked idle in one native call per run, built both
 * behind the sampled-inputs shim (what every co-simulation uses) and without it, alternately, so
 * the ratio between the two is measured in the same run.
 *
 *   npx tsx scripts/idle-speed.ts [--width 8] [--qps 1,2,4] [--cycles 300000] [--rounds 3]
 *
 * Wall-clock figures: compare them within one run on a quiet machine, not across machines.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../hdl-gen/gen/config';
import { openTop } from '../sim/cosim/rnic';
import type { SimModel } from '../sim/verilator/model';

const { values } = parseArgs({
  options: { width: { type: 'string', default: '8' }, qps: { type: 'string', default: '1,2,4' }, cycles: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '3' } },
});
const width = Number(values.width);
const cycles = Number(values.cycles);
const rounds = Number(values.rounds);

const reset = (model: SimModel): void => {
  const rst = model.handle('rst');
  model.pokeNumber(rst, 1);
  model.tick(5);
  model.pokeNumber(rst, 0);
};

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

for (const qps of values.qps.split(',').map(Number)) {
  const config = parseConfig({ width, qps });
  const models = { sampled: openTop(width, { config }), direct: openTop(width, { config, sampledInputs: false }) };
  const rates: Record<keyof typeof models, number[]> = { sampled: [], direct: [] };
  try {
    for (const m of Object.values(models)) reset(m);
    for (let round = 0; round < rounds; round++) {
      for (const [name, model] of Object.entries(models) as [keyof typeof models, SimModel][]) {
        const t0 = performance.now();
        model.tick(cycles);
        rates[name].push(cycles / ((performance.now() - t0) / 1000));
      }
    }
  } finally {
    for (const m of Object.values(models)) m.close();
  }
  const k = (x: number): string => `${Math.round(x / 1000)} k`;
  const [s, d] = [median(rates.sampled), median(rates.direct)];
  console.log(`rnic_top_w${width}, ${qps} QP${qps === 1 ? '' : 's'}, idle: ${k(s)} cycles/s behind the sampled-inputs shim, ${k(d)} without: ${(s / d).toFixed(2)}×`);
}
