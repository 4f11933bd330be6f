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
 *   yet stored: each of the last L updates is held beside the RAM and forwarded if it is to the
 *   index read, the newest first. So the same index read right after (or while) it is written
 *   back costs no stall: back to back, alternating or every cycle a new index, the value is
 *   current. The index compares are made when an update is issued and registered, so `value` is
 *   the RAM's output through one mux per update held, on registers (no compare on its path).
 * - An update in cycle t + L itself is not in `value`: the caller that holds the value live from
 *   then on (its pipeline stage) applies its own updates.
 */
export interface ContextMemory {
  readonly value: Signal;
  readonly latency: 1 | 2;
  lookup(index: Expr, enable: Expr): void;
  update(enable: Expr, index: Expr, data: Expr): void;
}

export function contextMemory(m: ModuleBuilder, name: string, opts: { readonly width: number; readonly depth: number; readonly latency: 1 | 2; readonly doc?: string }): ContextMemory {
  const { width, depth, latency } = opts;
  const store = ram(m, name, { width, depth, latency, ...(opts.doc && { doc: opts.doc }) });
  const aw = store.addrWidth;
  // The index looked up, carried along with the read for the forwarding compares.
  const readIdx: Signal[] = [];
  // The last L updates: age 1 is the previous cycle's.
  const hist = Array.from({ length: latency }, (_, i) => ({
    valid: m.reg(`${name}_wb${i + 1}_valid`, 1, { reset: 0, doc: `${name}: an update ${i + 1} cycle${i ? 's' : ''} ago` }),
    data: m.reg(`${name}_wb${i + 1}_data`, width),
  }));
  const value = m.wire(`${name}_value`, width, { doc: `${name}: the looked-up record, with the updates in flight forwarded` });
  let lookupPort: { readonly index: Expr; readonly enable: Expr } | null = null;
  let updateIndex: Expr | null = null;
  /**
   * The forwarding, once both ports are known. In cycle c the value is the read of the index
   * looked up in cycle c − L, at(c), with the newest of the last L updates to that index laid over
   * it (the RAM's read register holds its word while no lookup is enabled). Whether the
   * update of age a (issued in cycle c − a) is to at(c) is compared in cycle c − a, when that
   * update is issued, against what at(c) will be: rd_index_d<L−a> (the index looked up L − a
   * cycles before), or for a = L the index rd_index_d1 takes (the lookup's, if enabled, else its
   * own). The compare is registered a cycles (`<name>_fwd<a>`), so the value is the RAM's output
   * through a mux per age on registers: the compare is off the path from the RAM into the
   * caller's logic (issue 17: mpa_tx's context into its marker decode was 7 LUT levels).
   */
  const forward = () => {
    if (!lookupPort || !updateIndex) return;
    const { index, enable } = lookupPort;
    const upIndex = updateIndex;
    const hits = hist.map((_, i) => {
      const age = i + 1;
      const fwd = Array.from({ length: age }, (_, k) =>
        m.reg(`${name}_fwd${age}${age > 1 ? `_d${k + 1}` : ''}`, 1, {
          reset: 0,
          doc: `${name}: the update of ${k + 1} cycle${k ? 's' : ''} ago is to the index read out ${age - k - 1 === 0 ? 'now' : `in ${age - k - 1} cycle${age - k - 1 === 1 ? '' : 's'}`}`,
        }),
      );
      const next =
        age < latency
          ? upIndex.eq(readIdx[latency - age - 1]!)
          : mux(enable, upIndex.eq(index), upIndex.eq(readIdx[0]!));
      m.sync(() => {
        m.set(fwd[0]!, next);
        for (let k = 1; k < age; k++) m.set(fwd[k]!, fwd[k - 1]!);
      });
      return fwd[age - 1]!;
    });
    // In cycle t + L the history holds cycles t + L − 1 (age 1) … t (age L). The newest match wins.
    m.assign(value, hist.reduceRight<Expr>((acc, h, i) => mux(h.valid.and(hits[i]!), h.data, acc), store.data));
  };
  return {
    value,
    latency,
    lookup(index, enable) {
      if (lookupPort) throw new HdlError(`context memory '${name}' has one lookup port`);
      if (index.width !== aw) throw new HdlError(`context memory '${name}' of depth ${depth} takes a ${aw}-bit index, got ${index.width} bits`);
      lookupPort = { index, enable };
      store.read(index, enable);
      let prev: Expr = index;
      // The forwarding compares need rd_index_d1 … d<L−1> (and d1 with L = 1; see forward).
      for (let i = 0; i < Math.max(1, latency - 1); i++) {
        const r = m.reg(`${name}_rd_index_d${i + 1}`, aw);
        const p = prev;
        // The first follows the RAM's read register (loaded on enable), the next its output register.
        m.sync(() => (i === 0 ? m.when(enable, () => m.set(r, p)) : m.set(r, p)));
        readIdx.push(r);
        prev = r;
      }
      forward();
    },
    update(enable, index, data) {
      if (updateIndex) throw new HdlError(`context memory '${name}' has one update port`);
      if (data.width !== width) throw new HdlError(`context memory '${name}' holds ${width}-bit records, given ${data.width}`);
      updateIndex = index;
      store.write(enable, index, data);
      m.sync(() => {
        m.set(hist[0]!.valid, enable);
        m.set(hist[0]!.data, data);
        for (let i = 1; i < latency; i++) {
          m.set(hist[i]!.valid, hist[i - 1]!.valid);
          m.set(hist[i]!.data, hist[i - 1]!.data);
        }
      });
      forward();
    },
  };
}
