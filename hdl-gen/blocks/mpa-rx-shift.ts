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

/**
 * A beat of n units (n = keep.width, a power of two ≥ 2) written into a ring of C units (a power
 * of two ≥ n) at unit `amount`: ring[(j + amount) mod C] = data[j] where keep[j]. The beat is
 * rotated by amount mod n (ringPlace on n units: a log shifter of the beat, not of the ring), and
 * ring unit p takes rotated unit p mod n, so each ring unit has one source. `mask` (a bit per ring
 * unit) says which units the beat writes: rotated lane l = p mod n where its keep is set, in block
 * amount div n for the lanes at or above amount mod n, in the next block (mod C/n) below it.
 */
export function ringWrite(m: ModuleBuilder, name: string, data: Expr, keep: Expr, unit: number, amount: Expr, C: number): { data: Expr; mask: Expr } {
  const n = keep.width;
  const lb = Math.log2(n);
  if (data.width !== n * unit || !Number.isInteger(lb) || lb < 1 || C % n !== 0 || C !== 1 << amount.width) {
    throw new RangeError(`ring write of ${n} units of ${unit} bits into ${C} units by a ${amount.width}-bit pointer`);
  }
  const lo = amount.slice(lb - 1, 0);
  const rotated = ringPlace(m, `${name}_data`, data, unit, lo);
  const rotatedKeep = ringPlace(m, `${name}_keep`, keep, 1, lo);
  const B = C / n;
  if (B === 1) return { data: rotated, mask: rotatedKeep };
  const hi = amount.slice(amount.width - 1, lb);
  const inBlock = Array.from({ length: B }, (_, b) => hi.eq(lit(hi.width, b)));
  const mask = Array.from({ length: C }, (_, p) => {
    const l = p % n;
    const b = Math.floor(p / n);
    const here = l === n - 1 ? inBlock[b]! : mux(lo.le(lit(lb, l)), inBlock[b]!, inBlock[(b + B - 1) % B]!);
    return rotatedKeep.bit(l).and(here);
  });
  return { data: cat(...Array.from({ length: B }, () => rotated)), mask: join(mask) };
}
