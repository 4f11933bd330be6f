import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';

/**
 * Pruned log shifters for the MPA receive ring (mpa-rx.ts). Each stage is a named wire holding
 * only the units later stages read, so every emitted bit is used (Verilator -Wall clean) and a
 * wide ring costs no more than the window it feeds.
 */

/** `x` cut into units of `unit` bits, lowest first. */
export function unitsOf(x: Expr, unit: number): Expr[] {
  return Array.from({ length: x.width / unit }, (_, i) => x.slice(unit * i + unit - 1, unit * i));
}

const join = (units: readonly Expr[]): Expr => cat(...[...units].reverse());

/**
 * The first `take` units of a ring of C = 2^amount.width units, read from unit `amount` on:
 * out[j] = ring[(j + amount) mod C]. Stages run from the top amount bit down; stage b keeps
 * `take + 2^b − 1` units (all of them while that is ≥ C).
 */
export function ringWindow(m: ModuleBuilder, name: string, ring: Expr, unit: number, amount: Expr, take: number): Expr {
  const C = ring.width / unit;
  if (C !== 1 << amount.width) throw new RangeError(`ring of ${C} units needs a ${Math.log2(C)}-bit pointer, got ${amount.width}`);
  if (take > C) throw new RangeError(`window of ${take} units from a ring of ${C}`);
  let v = unitsOf(ring, unit);
  for (let b = amount.width - 1; b >= 0; b--) {
    const s = 1 << b;
    const n = Math.min(C, take + s - 1);
    const size = v.length;
    const src = v;
    const next = Array.from({ length: n }, (_, j) => {
      const from = size === C ? (j + s) % C : j + s;
      if (from >= size) throw new Error(`internal: ringWindow stage ${b} reads unit ${from} of ${size}`);
      return mux(amount.bit(b), src[from]!, src[j]!);
    });
    v = unitsOf(m.let(`${name}_s${b}`, join(next), { doc: `ring read from the pointer, stage ${b} (${s} ${unit === 32 ? 'words' : 'units'})` }), unit);
  }
  return join(v);
}

/**
 * `data` (its units 0..n−1) written into a ring of C = 2^amount.width units at unit `amount`,
 * zero elsewhere: out[(j + amount) mod C] = data[j]. Stages run from bit 0 up; stage b keeps
 * n + 2^(b+1) − 1 units (at most C).
 */
export function ringPlace(m: ModuleBuilder, name: string, data: Expr, unit: number, amount: Expr): Expr {
  const C = 1 << amount.width;
  let v: (Expr | null)[] = unitsOf(data, unit);
  if (v.length > C) throw new RangeError(`${v.length} units do not fit a ring of ${C}`);
  const zero = lit(unit, 0);
  for (let b = 0; b < amount.width; b++) {
    const s = 1 << b;
    const size = v.length;
    const n = Math.min(C, size + s);
    const src = v;
    const at = (i: number): Expr | null => (i >= 0 && i < size ? src[i]! : null);
    const next = Array.from({ length: n }, (_, j) => {
      const moved = at(n === C ? (j - s + C) % C : j - s);
      const kept = at(j);
      if (!moved && !kept) return null;
      return mux(amount.bit(b), moved ?? zero, kept ?? zero);
    });
    const wire = m.let(`${name}_s${b}`, join(next.map((u) => u ?? zero)), { doc: `ring write placed at the pointer, stage ${b}` });
    v = unitsOf(wire, unit).map((u, j) => (next[j] ? u : null));
  }
  return join(v.map((u) => u ?? zero));
}
