/**
 * 32×32 matrices over GF(2), a row per output bit as a 32-bit mask of input bits (the layout of
 * ts-model/crc32c CrcMatrices.stateRows). Used to derive the CRC block's extra matrices from the
 * model's, never to write them by hand.
 */
export type Gf2Matrix = readonly number[];

export const identity32: Gf2Matrix = Object.freeze(Array.from({ length: 32 }, (_, i) => (1 << i) >>> 0));

/** (a · b) x = a (b x). */
export function mul(a: Gf2Matrix, b: Gf2Matrix): Gf2Matrix {
  return a.map((row) => {
    let r = 0;
    for (let j = 0; j < 32; j++) if ((row >>> j) & 1) r ^= b[j]!;
    return r >>> 0;
  });
}

export function apply(a: Gf2Matrix, x: number): number {
  let r = 0;
  a.forEach((row, i) => {
    let v = row & x;
    v ^= v >>> 16;
    v ^= v >>> 8;
    v ^= v >>> 4;
    v ^= v >>> 2;
    v ^= v >>> 1;
    r |= (v & 1) << i;
  });
  return r >>> 0;
}

/** The inverse, by Gauss–Jordan elimination; throws if singular. */
export function invert(a: Gf2Matrix): Gf2Matrix {
  const m = [...a];
  const inv = [...identity32];
  for (let col = 0; col < 32; col++) {
    const pivot = m.findIndex((row, r) => r >= col && (row >>> col) & 1);
    if (pivot < 0) throw new Error('GF(2) matrix is singular');
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    [inv[col], inv[pivot]] = [inv[pivot]!, inv[col]!];
    for (let r = 0; r < 32; r++) {
      if (r !== col && (m[r]! >>> col) & 1) {
        m[r] = (m[r]! ^ m[col]!) >>> 0;
        inv[r] = (inv[r]! ^ inv[col]!) >>> 0;
      }
    }
  }
  return inv;
}

export function power(a: Gf2Matrix, n: number): Gf2Matrix {
  let result = identity32;
  let base = a;
  for (let k = n; k > 0; k >>= 1) {
    if (k & 1) result = mul(result, base);
    base = mul(base, base);
  }
  return result;
}
