import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * Pruned log shifters for the MPA receive ring (mpa-rx.ts). Each stage is a named wire holding
 * only the units later stages read, so every emitted bit is used (Verilator -Wall clean) and a
 * wide ring costs no more than the window it feeds. A stage takes two bits of the amount (a 4:1
 * mux per bit, one LUT6): a 2:1 stage's outputs each feed two muxes of the next, so synthesis
 * cannot merge stages and a 64-word ring would cost 6 LUT levels instead of 3.
 */

/** `x` cut into units of `unit` bits, lowest first. */
export function unitsOf(x: Expr, unit: number): Expr[] {
  return Array.from({ length: x.width / unit }, (_, i) => x.slice(unit * i + unit - 1, unit * i));
}

const join = (units: readonly Expr[]): Expr => cat(...[...units].reverse());

/** The amount's bits in stages of two, [lo, bits] each: from the top down, or from bit 0 up. */
function radix4Stages(width: number, topDown: boolean): (readonly [lo: number, bits: number])[] {
  const up = Array.from({ length: Math.ceil(width / 2) }, (_, i) => [2 * i, Math.min(2, width - 2 * i)] as const);
  return topDown ? up.reverse() : up;
}

/** choices[v] where v = amount[lo + bits - 1 : lo], as one mux tree (null choices read as zero). */
function pick(amount: Expr, lo: number, choices: readonly (Expr | null)[], zero: Expr): Expr | null {
  if (choices.every((c) => !c)) return null;
  const at = (v: number) => choices[v] ?? zero;
  if (choices.length === 2) return mux(amount.bit(lo), at(1), at(0));
  return mux(amount.bit(lo + 1), mux(amount.bit(lo), at(3), at(2)), mux(amount.bit(lo), at(1), at(0)));
}

/**
 * The first `take` units of a ring of C = 2^amount.width units, read from unit `amount` on:
 * out[j] = ring[(j + amount) mod C]. Stages run from the top amount bits down; the stage of bits
 * lo.. keeps `take + 2^lo − 1` units (all of them while that is ≥ C); the last stage (the window)
 * is returned.
 */
export function ringWindow(m: ModuleBuilder, name: string, ring: Expr, unit: number, amount: Expr, take: number): Signal {
  const C = ring.width / unit;
  if (C !== 1 << amount.width) throw new RangeError(`ring of ${C} units needs a ${Math.log2(C)}-bit pointer, got ${amount.width}`);
  if (take > C) throw new RangeError(`window of ${take} units from a ring of ${C}`);
  let v = unitsOf(ring, unit);
  let stage: Signal | null = null;
  for (const [lo, bits] of radix4Stages(amount.width, true)) {
    const s = 1 << lo;
    const n = Math.min(C, take + s - 1);
    const size = v.length;
    const src = v;
    const next = Array.from({ length: n }, (_, j) => {
      const choices = Array.from({ length: 1 << bits }, (_, k) => {
        const from = size === C ? (j + k * s) % C : j + k * s;
        if (from >= size) throw new Error(`internal: ringWindow stage ${lo} reads unit ${from} of ${size}`);
        return src[from]!;
      });
      return pick(amount, lo, choices, lit(unit, 0))!;
    });
    stage = m.let(`${name}_s${lo}`, join(next), { doc: `ring read from the pointer, bits ${lo}+ of it` });
    v = unitsOf(stage, unit);
  }
  if (!stage) throw new RangeError(`ring '${name}' of one unit has no window to read`);
  return stage;
}

/**
 * `data` (its units 0..n−1) written into a ring of C = 2^amount.width units at unit `amount`,
 * zero elsewhere: out[(j + amount) mod C] = data[j]. Stages run from bit 0 up; the stage of bits
 * lo.. keeps n + 2^(lo+bits) − 1 units (at most C).
 */
export function ringPlace(m: ModuleBuilder, name: string, data: Expr, unit: number, amount: Expr): Expr {
  const C = 1 << amount.width;
  let v: (Expr | null)[] = unitsOf(data, unit);
  if (v.length > C) throw new RangeError(`${v.length} units do not fit a ring of ${C}`);
  const zero = lit(unit, 0);
  for (const [lo, bits] of radix4Stages(amount.width, false)) {
    const s = 1 << lo;
    const size = v.length;
    const n = Math.min(C, size + ((1 << bits) - 1) * s);
    const src = v;
    const at = (i: number): Expr | null => (i >= 0 && i < size ? src[i]! : null);
    const next = Array.from({ length: n }, (_, j) =>
      pick(amount, lo, Array.from({ length: 1 << bits }, (_, k) => at(n === C ? (j - k * s + C) % C : j - k * s)), zero),
    );
    const wire = m.let(`${name}_s${lo}`, join(next.map((u) => u ?? zero)), { doc: `ring write placed at the pointer, bits ${lo}+ of it` });
    v = unitsOf(wire, unit).map((u, j) => (next[j] ? u : null));
  }
  return join(v.map((u) => u ?? zero));
}
