import { type Expr, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import { Signal } from '../core/signal';

/**
 * A round-robin arbiter over valid/ready sources sharing one sink, inside a module. The grant
 * goes to the first requester after the one granted last; it is held from the first beat of a
 * grant until the beat with `last` is taken, so a packet (or a beat waiting for ready) is never
 * cut: AXI4-Stream forbids changing an offered beat before its handshake.
 *
 * Use: read `index` / `sel(i)` to build the output mux, then call `sync(fire, last)` inside the
 * module's register process with the output handshake and its tlast (1 for single-beat transfers).
 */
export interface Arbiter {
  /** The granted source (0 when there is only one). */
  readonly index: Expr;
  /** Source i holds the grant. */
  sel(i: number): Expr;
  /** The granted source's valid. */
  readonly valid: Expr;
  /** Picks `fields[index]` (all of one width). */
  pick(fields: readonly Expr[]): Expr;
  sync(fire: Expr, last: Expr): void;
}

/** `xs[index]`: a chain of compares, the last match wins (xs all of one width, index as wide as needed). */
export const pickByIndex = (index: Expr, xs: readonly Expr[]): Expr =>
  xs.slice(1).reduce<Expr>((acc, x, k) => mux(index.eq(lit(index.width, k + 1)), x, acc), xs[0]!);

export function roundRobin(m: ModuleBuilder, name: string, valids: readonly Expr[]): Arbiter {
  const n = valids.length;
  if (n < 1) throw new RangeError(`arbiter '${name}' needs a source`);
  const bits = Math.max(1, Math.ceil(Math.log2(n)));
  const pick = (fields: readonly Expr[]): Expr => pickByIndex(index, fields);
  if (n === 1) {
    const index = lit(1, 0);
    const sync = (fire: Expr) => {
      if (fire instanceof Signal) m.allowUnused(fire, 'one source: nothing to arbitrate');
    };
    return { index, sel: () => lit(1, 1), valid: valids[0]!, pick: (f) => f[0]!, sync };
  }
  const lastGrant = m.reg(`${name}_last`, bits, { reset: n - 1, doc: 'the source granted last (round-robin starts after it)' });
  const locked = m.reg(`${name}_locked`, 1, { reset: 0, doc: 'a transfer is under way: the grant holds until its last beat is taken' });
  const owner = m.reg(`${name}_owner`, bits, { doc: 'the source holding a locked grant' });
  // For each possible lastGrant s: the first valid source among s+1, s+2, ... (mod n).
  const firstAfter = (s: number): Expr => {
    let e: Expr = lit(bits, s);
    for (let k = n; k >= 1; k--) {
      const i = (s + k) % n;
      e = mux(valids[i]!, lit(bits, i), e);
    }
    return e;
  };
  let rr: Expr = firstAfter(n - 1);
  for (let s = n - 2; s >= 0; s--) rr = mux(lastGrant.eq(lit(bits, s)), firstAfter(s), rr);
  const index: Signal = m.let(`${name}_grant`, mux(locked, owner, rr), { doc: `the source ${name} serves` });
  const valid = m.let(`${name}_valid`, pick(valids));
  return {
    index,
    sel: (i) => index.eq(lit(bits, i)),
    valid,
    pick,
    sync(fire, last) {
      m.when(valid.and(fire.and(last).not()), () => {
        m.set(locked, 1);
        m.set(owner, index);
      });
      m.when(fire.and(last), () => {
        m.set(locked, 0);
        m.set(lastGrant, index);
      });
    },
  };
}
