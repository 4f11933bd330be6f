import { deriveCrcMatrices, type CrcParams } from '../../ts-model/crc32c';
import { Expr, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import { applyMatrix, crcUpdate } from './crc-beat';
import { invert, power } from '../lib/gf2';

/**
 * CRC-32C register update over the first r 32-bit words of a window of K words, every matrix from
 * the model's parameter object (ts-model/crc32c), none written by hand.
 *
 * The window is fed whole with its words r..K−1 zeroed; feeding zero octets only multiplies the
 * register by Z (the one-octet state matrix), so the register after the r words is Z^−4(K−r) of
 * the result: a postfix rewind, log2(K+1) stages of 32×32 matrices selected by the bits of
 * `drop` = K − r (Z is invertible because x does not divide the polynomial). This is the
 * rewind of crc32c.ts applied after the update instead of before, so the words need no shifter.
 */
export function crcWindowUpdate(m: ModuleBuilder, name: string, params: CrcParams, state: Expr, words: Expr, drop: Expr): Expr {
  const octets = words.width / 8;
  const full = deriveCrcMatrices(params, octets);
  let v: Expr = m.let(`${name}_fwd`, crcUpdate(full.stateRows, full.dataRows, state, words), { doc: `CRC register after all ${octets / 4} window words` });
  const zInv = invert(deriveCrcMatrices(params, 1).stateRows);
  for (let b = 0; b < drop.width; b++) {
    const back = m.let(`${name}_back${b}`, applyMatrix(power(zInv, 4 << b), v), { doc: `Z^-${4 << b}: ${1 << b} zero words back` });
    v = m.let(`${name}_rew${b}`, mux(drop.bit(b), back, v), { doc: `rewound if bit ${b} of the dropped word count` });
  }
  return v;
}
