/** TCP sequence-number arithmetic, modulo 2^32 (RFC 793 §3.3). */

export const seqAdd = (seq: number, n: number): number => (seq + n) >>> 0;

/** Distance from `from` forward to `to`, modulo 2^32. */
export const seqDiff = (to: number, from: number): number => (to - from) >>> 0;

export function checkSeq(name: string, seq: number): void {
  if (!Number.isInteger(seq) || seq < 0 || seq > 0xffffffff) {
    throw new RangeError(`${name} must be a 32-bit sequence number, got ${seq}`);
  }
}
