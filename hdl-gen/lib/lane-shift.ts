import { type Expr, cat, lit, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * `data` shifted right by `amount` lanes of `laneBits` bits, its low `outLanes` lanes kept (lanes
 * from beyond the top read as 0): the realigning rotate of a gearbox.
 *
 * Built radix 4, two bits of `amount` per stage, most significant first: each lane of a stage is a
 * 4:1 mux (one LUT6 per bit), so 64 positions take 3 LUT levels. `x >> (8 * amount)` synthesises
 * as a radix-2 shifter instead, a LUT3 per stage and 6 levels for 64 positions, which abc does not
 * merge (every stage output feeds two lanes of the next). Each stage keeps only the lanes the
 * later stages can still reach, so the wide first stage is the only one of full width.
 */
export function laneShiftRight(m: ModuleBuilder, name: string, data: Expr, amount: Expr, laneBits: number, outLanes: number): Signal {
  if (data.width % laneBits !== 0) throw new HdlError(`laneShiftRight ${name}: ${data.width} bits are not whole ${laneBits}-bit lanes`);
  const inLanes = data.width / laneBits;
  if (outLanes < 1 || outLanes > inLanes) throw new HdlError(`laneShiftRight ${name}: ${outLanes} lanes out of ${inLanes}`);
  const lane = (x: Expr, i: number, n: number): Expr => (i < n ? x.slice(laneBits * i + laneBits - 1, laneBits * i) : lit(laneBits, 0));
  let x: Expr = data;
  let lanes = inLanes;
  for (let lo = amount.width - (amount.width % 2 === 0 ? 2 : 1); lo >= 0; lo -= 2) {
    const bits = Math.min(2, amount.width - lo);
    const step = 1 << lo;
    // Lanes the stages after this one can reach: outLanes + their largest shift.
    const keep = Math.min(lanes, outLanes + step - 1);
    const d0 = amount.bit(lo);
    const out = Array.from({ length: keep }, (_, i) => {
      const at = (s: number) => lane(x, i + s * step, lanes);
      if (bits === 1) return mux(d0, at(1), at(0));
      const d1 = amount.bit(lo + 1);
      return mux(d1, mux(d0, at(3), at(2)), mux(d0, at(1), at(0)));
    });
    x = m.let(`${name}_s${lo >> 1}`, cat(...out.reverse()), { doc: `${name}: shifted by amount[${lo + bits - 1}:${lo}] lanes ×${step}` });
    lanes = keep;
  }
  return m.let(name, x.slice(laneBits * outLanes - 1, 0));
}
