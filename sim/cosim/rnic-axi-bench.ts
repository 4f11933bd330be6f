import { parseConfig, type RnicConfig } from '../../hdl-gen/gen/config';
import type { Prng } from '../../ts-model/util/prng';
import type { PauseGen } from '../cocotb/pause';
import { AxiMemorySlave } from '../harness/axi-memory';
import type { BackgroundMemory } from '../harness/memory';
import type { SimModel } from '../verilator/model';

/**
 * rnic_top behind its AXI4 master (rnic_top_axi_mem_w<W>, hdl-gen/blocks/rnic-top-axi-mem.ts; the
 * configuration's `memory: 'axi4'`) in the top's harnesses: RnicBench (rnic-bench.ts) puts this
 * AXI4 slave memory (sim/harness/axi-memory.ts) where the native read and write ports are, so the
 * scoreboard run (rnic.ts cosimRnic), the scenarios and the line-rate runs (rnic-rate.ts) run on it
 * unchanged.
 */

/**
 * Answers of a functional run: 1..16 cycles after a burst, so bursts of different IDs overtake
 * each other often (the native port answers in 1..4, in order).
 */
export const AXI_HOST_LATENCY = Object.freeze({ min: 1, max: 16 });

/**
 * The slave for RnicBench: with `background`, the transmit rates' read-only memory, answered a
 * fixed `latency` after each burst, nothing paused; otherwise an empty host memory, every channel
 * paused with the bench's back-pressure (`pause()`), answers out of order.
 */
export function axiHostMemory(model: SimModel, r: Prng, width: number, o: { readonly memory?: { readonly background: BackgroundMemory; readonly latency: number }; readonly pause: () => PauseGen; readonly report: (v: string) => void }): AxiMemorySlave {
  if (o.memory) {
    const bg = o.memory.background;
    const L = o.memory.latency;
    return new AxiMemorySlave(model, r, { width, memory: { read: (a, n) => bg.read(a, n), write: () => {} }, latency: { min: L, max: L }, report: o.report });
  }
  const p = o.pause;
  return new AxiMemorySlave(model, r, { width, latency: AXI_HOST_LATENCY, awPause: p(), wPause: p(), arPause: p(), bPause: p(), rPause: p() });
}

/** The configuration of a top at `width` with `qps` QPs, its memory native or behind AXI4. */
export const topConfig = (width: number, qps: number, memory: 'native' | 'axi4'): RnicConfig => parseConfig({ width, qps, ...(memory === 'axi4' && { memory }) });

/** The top a configuration opens: rnic_top_axi_mem_w<W> for memory 'axi4', else rnic_top_w<W>. */
export const topModuleOf = (width: number, config?: RnicConfig): string => (config?.memory === 'axi4' ? `rnic_top_axi_mem_w${width}` : `rnic_top_w${width}`);
