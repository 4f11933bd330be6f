/**
 * How fast Verilator runs the bare top, with no harness: the floor under `rnic cosim`'s
 * simCyclesPerSecond. The top is reset, then ticked idle in one native call per run.
 *
 *   npx tsx scripts/idle-speed.ts [--width 8] [--qps 1,2,4] [--cycles 300000]
 *
 * Wall-clock figures: compare them within one run on a quiet machine, not across machines.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../hdl-gen/gen/config';
import { openTop } from '../sim/cosim/rnic';

const { values } = parseArgs({ options: { width: { type: 'string', default: '8' }, qps: { type: 'string', default: '1,2,4' }, cycles: { type: 'string', default: '300000' } } });
const width = Number(values.width);
const cycles = Number(values.cycles);
for (const qps of values.qps.split(',').map(Number)) {
  const model = openTop(width, { config: parseConfig({ width, qps }) });
  try {
    const rst = model.handle('rst');
    model.pokeNumber(rst, 1);
    model.tick(5);
    model.pokeNumber(rst, 0);
    const t0 = performance.now();
    model.tick(cycles);
    const seconds = (performance.now() - t0) / 1000;
    console.log(`rnic_top_w${width}, ${qps} QP${qps === 1 ? '' : 's'}, idle: ${Math.round(cycles / seconds / 1000)} k cycles/s`);
  } finally {
    model.close();
  }
}
