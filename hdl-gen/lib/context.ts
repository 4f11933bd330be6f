import { type Expr, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { ram } from './ram';

/**
 * A context memory: one record of state per index (per QP), in block RAM, read ahead and written
 * back by a pipeline that does read-modify-write (Corundum's queue_manager.v keeps per-queue state
 * the same way). Contract, with L the read latency (1 or 2):
 *
 * - `lookup(index, enable)` in cycle t gives `value` in cycle t + L;
 * - `value` includes every `update` issued in cycles up to t + L − 1, even those the RAM has not
 *   yet stored: each of the last L updates is held beside the RAM with its index and forwarded on
 *   a match, the newest first. So the same index read right after (or while) it is written back
 *   costs no stall: back to back, alternating or every cycle a new index, the value is current.
 * - An update in cycle t + L itself is not in `value`: the caller that holds the value live from
 *   then on (its pipeline stage) applies its own updates.
 * - `pending(index)`: some update of `index` is not yet readable from the RAM alone, for a caller
 *   that chooses to stall instead.
 */
export interface ContextMemory {
  readonly value: Signal;
  readonly latency: 1 | 2;
  lookup(index: Expr, enable: Expr): void;
  update(enable: Expr, index: Expr, data: Expr): void;
  pending(index: Expr): Expr;
}

export function contextMemory(m: ModuleBuilder, name: string, opts: { readonly width: number; readonly depth: number; readonly latency: 1 | 2; readonly doc?: string }): ContextMemory {
  const { width, depth, latency } = opts;
  const store = ram(m, name, { width, depth, latency, ...(opts.doc && { doc: opts.doc }) });
  const aw = store.addrWidth;
  // The index looked up, carried along with the read so the forwarding compares it at the output.
  const readIdx: Signal[] = [];
  // The last L updates: age 1 is the previous cycle's.
  const hist = Array.from({ length: latency }, (_, i) => ({
    valid: m.reg(`${name}_wb${i + 1}_valid`, 1, { reset: 0, doc: `${name}: an update ${i + 1} cycle${i ? 's' : ''} ago` }),
    index: m.reg(`${name}_wb${i + 1}_index`, aw),
    data: m.reg(`${name}_wb${i + 1}_data`, width),
  }));
  const value = m.wire(`${name}_value`, width, { doc: `${name}: the looked-up record, with the updates in flight forwarded` });
  let looked = false;
  let updated = false;
  return {
    value,
    latency,
    lookup(index, enable) {
      if (looked) throw new HdlError(`context memory '${name}' has one lookup port`);
      looked = true;
      if (index.width !== aw) throw new HdlError(`context memory '${name}' of depth ${depth} takes a ${aw}-bit index, got ${index.width} bits`);
      store.read(index, enable);
      let prev: Expr = index;
      for (let i = 0; i < latency; i++) {
        const r = m.reg(`${name}_rd_index_d${i + 1}`, aw);
        const p = prev;
        // The first follows the RAM's read register (loaded on enable), the next its output register.
        m.sync(() => (i === 0 ? m.when(enable, () => m.set(r, p)) : m.set(r, p)));
        readIdx.push(r);
        prev = r;
      }
      // Updates issued after the read was taken from the RAM: in cycle t + L the history holds
      // cycles t + L − 1 (age 1) … t (age L). The newest match wins.
      const at = readIdx[latency - 1]!;
      m.assign(value, hist.reduceRight<Expr>((acc, h) => mux(h.valid.and(h.index.eq(at)), h.data, acc), store.data));
    },
    update(enable, index, data) {
      if (updated) throw new HdlError(`context memory '${name}' has one update port`);
      updated = true;
      if (data.width !== width) throw new HdlError(`context memory '${name}' holds ${width}-bit records, given ${data.width}`);
      store.write(enable, index, data);
      m.sync(() => {
        m.set(hist[0]!.valid, enable);
        m.set(hist[0]!.index, index);
        m.set(hist[0]!.data, data);
        for (let i = 1; i < latency; i++) {
          m.set(hist[i]!.valid, hist[i - 1]!.valid);
          m.set(hist[i]!.index, hist[i - 1]!.index);
          m.set(hist[i]!.data, hist[i - 1]!.data);
        }
      });
    },
    pending: (index) => hist.map((h) => h.valid.and(h.index.eq(index))).reduce((a, b) => a.or(b)),
  };
}
