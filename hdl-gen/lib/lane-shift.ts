import { type Expr, cat, lit, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * `data` shifted right by `amount` lanes of `laneBits` bits, its low `outLanes` lanes kept (lanes
 * from beyond the top read as 0): the realigning rotate of a gearbox.
 *
 * Built as stages of 4:1 muxes, two bits of `amount` each, most significant first; each stage
 * keeps only the lanes the later stages can still reach, so the wide first stage is the only one
 * of full width. That needs fewer LUTs than `x >> (8 * amount)` over the whole vector (7302 →
 * 6042 in rdmap_tx_resp_w64). It is not shallower under `synth_xilinx -abc9`: structural hashing
 * makes any barrel a radix-2 network, and abc9's delay model maps it as one LUT3 per bit of
 * `amount` (6 LUT levels for 64 positions, measured on the shifter alone between registers). A
 * rotate that must fit the 6-level budget with logic around it is split over two registers
 * (ddp-tx-output.ts takes the first step on the way into its realign stage).
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
