import { deriveCrcMatrices, type CrcParams } from '../../ts-model/crc32c';
import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import { invert, power, type Gf2Matrix } from '../lib/gf2';

/**
 * The CRC register after one beat of `W` octets of which the first k = W − j are valid (lanes
 * 0..k−1), for j given by `shiftLanes` (log2 W bits; bit b selects a shift of 2^b octets).
 *
 * One W-octet matrix pair serves every k: the octets are shifted up by j lanes and the register
 * first moved j zero-octet steps back (Z^−j; Z is the model's one-octet state matrix, invertible
 * since x does not divide the polynomial). From that register, j zero octets lead back to the
 * register, then the k octets follow. Stages whose shift bit is constant 0 are left out.
 */
export function crcBeat(
  m: ModuleBuilder,
  prefix: string,
  params: CrcParams,
  state: Expr,
  data: Expr,
  shiftLanes: Expr | null,
  firstStage = 0,
): Expr {
  const W = data.width / 8;
  const full = deriveCrcMatrices(params, W);
  const zInv = invert(deriveCrcMatrices(params, 1).stateRows);
  let d = data;
  let reg = state;
  const stages = Math.log2(W);
  for (let b = firstStage; shiftLanes && b < stages; b++) {
    const by = 8 * (1 << b);
    const sel = shiftLanes.bit(b);
    d = m.let(`${prefix}_data_shift${b}`, mux(sel, cat(d.slice(8 * W - 1 - by, 0), lit(by, 0)), d), { doc: `lanes up by ${1 << b} if bit ${b} of the shift` });
    const back = m.let(`${prefix}_back${b}`, applyMatrix(power(zInv, 1 << b), reg), { doc: `Z^-${1 << b}: the CRC register ${1 << b} zero octets back` });
    reg = m.let(`${prefix}_rewind${b}`, mux(sel, back, reg), { doc: `rewound if bit ${b} of the shift` });
  }
  return m.let(`${prefix}_next`, crcUpdate(full.stateRows, full.dataRows, reg, d));
}

/** x ↦ A·x as a 32-bit concatenation of parity terms (an XOR tree per output bit). */
export function applyMatrix(a: Gf2Matrix, x: Expr): Expr {
  return cat(...a.map((row) => (row ? x.and(lit(32, row >>> 0)).parity() : lit(1, 0))).reverse());
}

/** next = S·state ⊕ D·data, per output bit the parity of the masked state and data. */
export function crcUpdate(stateRows: readonly number[], dataRows: readonly bigint[], state: Expr, data: Expr): Expr {
  const bits = stateRows.map((srow, i) => {
    const terms: Expr[] = [];
    if (srow) terms.push(state.and(lit(32, srow >>> 0)).parity());
    if (dataRows[i]) terms.push(data.and(lit(data.width, dataRows[i]!)).parity());
    return terms.length ? terms.reduce((a, t) => a.xor(t)) : lit(1, 0);
  });
  return cat(...bits.reverse());
}
