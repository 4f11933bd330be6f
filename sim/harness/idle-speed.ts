/**
 * How fast Verilator runs a top with no harness at all: reset, then ticked idle one cycle per
 * call, as a co-simulation steps it. The ceiling under any co-simulation's cycles per second on
 * the same machine, so benchmarks report a harness's speed as a ratio to it
 * (bench/run.ts, scripts/idle-speed.ts). Wall-clock: compare within one run, not across machines.
 */
import type { SimModel } from '../verilator/model';

const RESET_CYCLES = 5;

/** Holds `rst` for a few cycles and releases it. */
export function resetIdle(model: SimModel): void {
  const rst = model.handle('rst');
  model.pokeNumber(rst, 1);
  model.tick(RESET_CYCLES);
  model.pokeNumber(rst, 0);
}

/**
 * Cycles per second of `cycles` idle ticks (one native call each), the median of `rounds`;
 * `readAfter` reads an output after every tick (which commits the deferred edge at once).
 */
export function idleCyclesPerSecond(model: SimModel, cycles: number, rounds = 3, readAfter?: string): number {
  const out = readAfter === undefined ? null : model.handle(readAfter);
  const rates: number[] = [];
  for (let round = 0; round < rounds; round++) {
    const t0 = performance.now();
    if (out) for (let i = 0; i < cycles; i++) { model.tick(); model.peekNumber(out); }
    else for (let i = 0; i < cycles; i++) model.tick();
    rates.push(cycles / ((performance.now() - t0) / 1000));
  }
  return rates.sort((a, b) => a - b)[Math.floor(rounds / 2)]!;
}
