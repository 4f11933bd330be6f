import { type Expr, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';

/**
 * A small first-word-fall-through FIFO inside a module (queues of a few entries: posted receive
 * buffers, the ORQ, the IRRQ). The head is a combinational read of the storage, so `head` is valid
 * whenever `empty` is 0; push and pop may happen in the same cycle; `flush` empties it (a flush
 * wins over a pop, a push in the same cycle is kept). Pointers carry one extra bit, so
 * `count` = wptr − rptr distinguishes full from empty (full: the pointers differ in that bit only).
 */
export interface Fifo {
  readonly empty: Expr;
  readonly full: Expr;
  readonly count: Expr;
  readonly head: Expr;
}

export function fifo(
  m: ModuleBuilder,
  name: string,
  width: number,
  depth: number,
  ctl: { readonly push: Expr; readonly data: Expr; readonly pop: Expr; readonly flush?: Expr },
): Fifo {
  if (!Number.isInteger(depth) || depth < 2 || (depth & (depth - 1)) !== 0) throw new RangeError(`FIFO '${name}' depth must be a power of two >= 2, got ${depth}`);
  const aw = Math.log2(depth);
  const mem = m.memory(`${name}_mem`, width, depth);
  const wptr = m.reg(`${name}_wptr`, aw + 1, { reset: 0 });
  const rptr = m.reg(`${name}_rptr`, aw + 1, { reset: 0 });
  // Declared when first read: a queue whose users read only empty and full has no count.
  let count: Expr | undefined;
  // Pointer compares, not `count`: an equality is a couple of LUT levels, a subtraction then a
  // compare is a carry chain in front of every reader of empty or full.
  const empty = wptr.eq(rptr);
  const full = wptr.slice(aw, aw).ne(rptr.slice(aw, aw)).and(wptr.slice(aw - 1, 0).eq(rptr.slice(aw - 1, 0)));
  m.memoryWrite(mem, ctl.push, wptr.slice(aw - 1, 0), ctl.data);
  m.sync(() => {
    m.when(ctl.push, () => m.set(wptr, wptr.add(1)));
    const next = mux(ctl.pop, rptr.add(1), rptr);
    m.set(rptr, ctl.flush ? mux(ctl.flush, wptr, next) : next);
  });
  return {
    empty,
    full,
    get count() {
      return (count ??= m.let(`${name}_count`, wptr.sub(rptr), { doc: `entries in ${name}` }));
    },
    head: mem.read(rptr.slice(aw - 1, 0)),
  };
}
