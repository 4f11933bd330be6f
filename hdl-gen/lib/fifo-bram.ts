import { type Expr, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * A first-word-fall-through FIFO whose storage is a synchronous-read memory, so FPGA tools map it
 * to block RAM (an asynchronous read, as in fifo.ts, becomes LUT-RAM on Xilinx and flip-flops on
 * iCE40). The memory's read register is the head: `head` is valid while `headValid` is 1, and a
 * word pushed into an empty FIFO reaches it two clock edges later (one for the write, one for the
 * read). The head refills in the cycle it is popped, so one word per cycle flows through.
 *
 * Holds `depth` words in the memory plus one in the head. `full` says the memory is full; a caller
 * that bounds what it pushes by credits (ddp-tx-segmenter.ts) may ignore it.
 */
export interface BramFifo {
  readonly head: Signal;
  readonly headValid: Signal;
  /** Words in the memory, not counting the head: 0..depth. */
  readonly stored: Signal;
  readonly full: Expr;
  /** Nothing in the head nor in the memory. */
  readonly empty: Expr;
  /** The head takes the next word from the memory this cycle. */
  readonly load: Expr;
}

export function bramFifo(
  m: ModuleBuilder,
  name: string,
  width: number,
  depth: number,
  ctl: { readonly push: Expr; readonly data: Expr; readonly pop: Expr },
): BramFifo {
  if (!Number.isInteger(depth) || depth < 2 || (depth & (depth - 1)) !== 0) throw new RangeError(`FIFO '${name}' depth must be a power of two >= 2, got ${depth}`);
  const aw = Math.log2(depth);
  const mem = m.memory(`${name}_mem`, width, depth);
  const wptr = m.reg(`${name}_wptr`, aw, { reset: 0 });
  const rptr = m.reg(`${name}_rptr`, aw, { reset: 0 });
  const stored = m.reg(`${name}_count`, aw + 1, { reset: 0, doc: `words in ${name}_mem, not yet in the head register` });
  const head = m.reg(`${name}_head`, width, { doc: `the oldest word of ${name} (the memory's read register)` });
  const headValid = m.reg(`${name}_head_valid`, 1, { reset: 0 });
  // The count's two ends, registered beside it: empty and full are flip-flops, not compares.
  const none = m.reg(`${name}_none`, 1, { reset: 1, doc: `${name}_count == 0` });
  const filled = m.reg(`${name}_filled`, 1, { reset: 0, doc: `${name}_count == ${depth}` });
  const load = m.let(`${name}_load`, none.not().and(headValid.not().or(ctl.pop)), { doc: 'the head register takes the next word from the memory' });
  m.memoryWrite(mem, ctl.push, wptr, ctl.data);
  m.sync(() => {
    m.when(ctl.push, () => m.set(wptr, wptr.add(1)));
    m.when(load, () => {
      m.set(rptr, rptr.add(1));
      m.set(head, mem.read(rptr));
    });
    m.set(headValid, load.or(headValid.and(ctl.pop.not())));
    m.set(stored, stored.add(ctl.push.zext(aw + 1)).sub(load.zext(aw + 1)));
    // The count moves by one at most: it reaches 0 from 1 by a load alone, depth from depth − 1
    // by a push alone, and leaves either end by the other.
    const up = ctl.push.and(load.not());
    const down = load.and(ctl.push.not());
    m.set(none, mux(up, lit(1, 0), mux(down, stored.eq(1), none)));
    m.set(filled, mux(down, lit(1, 0), mux(up, stored.eq(lit(aw + 1, depth - 1)), filled)));
  });
  return { head, headValid, stored, full: filled, empty: headValid.not().and(none), load };
}
