/**
 * How fast Verilator runs the bare top, with no harness: the floor under `rnic cosim`'s
 * simCyclesPerSecond. The top is reset, then ticked idle one cycle per call, as a co-simulation
 * steps it, in four ways that take turns in one run, so their ratios do not depend on how busy
 * the machine is:
 *
 *   deferred       the default: behind the sampled-inputs shim, each edge deferred into the next
 *                  tick, so the logic settles once per cycle (sim/verilator/README.md);
 *   committed      the same model, with an output read after every tick, which takes the deferred
 *                  edge at once: the two-eval cycle, the logic settling twice;
 *   no shim        Verilated without the shim (`sampledInputs: false`);
 *   inlined        the default, but with Verilator's module inlining on (`-finline` overrides the
 *                  build's `-fno-inline`): the hierarchy flattened into one set of functions.
 *
 *   npx tsx scripts/idle-speed.ts [--width 8] [--qps 1,2,4] [--cycles 200000] [--rounds 3]
 *
 * Wall-clock figures: compare them within one run on a quiet machine, not across machines.
 */
import { parseArgs } from 'node:util';
import { parseConfig } from '../hdl-gen/gen/config';
import { openDut } from '../sim/harness/open-dut';
import type { SimModel } from '../sim/verilator/model';
import { idleCyclesPerSecond, resetIdle } from '../sim/harness/idle-speed';

const { values } = parseArgs({
  options: { width: { type: 'string', default: '8' }, qps: { type: 'string', default: '1,2,4' }, cycles: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '3' } },
});
const width = Number(values.width);
const cycles = Number(values.cycles);
const rounds = Number(values.rounds);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const k = (x: number): string => `${Math.round(x / 1000)} k`;

for (const qps of values.qps.split(',').map(Number)) {
  const config = parseConfig({ width, qps });
  const module = `rnic_top_w${width}`;
  const open = (opts: Parameters<typeof openDut>[1]): SimModel => openDut(module, { config, ...opts }).model;
  const deferred = open({});
  const variants: { name: string; model: SimModel; readAfter: boolean }[] = [
    { name: 'deferred', model: deferred, readAfter: false },
    { name: 'committed', model: deferred, readAfter: true },
    { name: 'no shim', model: open({ sampledInputs: false }), readAfter: false },
    { name: 'inlined', model: open({ extraFlags: ['-finline'] }), readAfter: false },
  ];
  const rates = new Map<string, number[]>(variants.map((v) => [v.name, []]));
  try {
    for (const v of new Set(variants.map((x) => x.model))) resetIdle(v);
    // The variants take turns, a round each, so a busy spell hits them all alike.
    for (let round = 0; round < rounds; round++) {
      for (const { name, model, readAfter } of variants) rates.get(name)!.push(idleCyclesPerSecond(model, cycles, 1, readAfter ? 'm_axis_tvalid' : undefined));
    }
  } finally {
    for (const m of new Set(variants.map((x) => x.model))) m.close();
  }
  const base = median(rates.get('deferred')!);
  const text = variants.map(({ name }) => {
    const r = median(rates.get(name)!);
    return name === 'deferred' ? `${name} ${k(r)}` : `${name} ${k(r)} (${(base / r).toFixed(2)}×)`;
  });
  console.log(`${module}, ${qps} QP${qps === 1 ? '' : 's'}, idle, cycles/s: ${text.join(', ')}`);
}
