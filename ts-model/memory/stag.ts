/**
 * Steering Tags (RFC 5040 §2 "STag"; RFC 5042 §5.1): 32 bits, the high 24 an index naming the
 * region in the RNIC's table, the low 8 a key the consumer changes on re-registration so that a
 * stale STag held by a peer stops matching.
 */

export const STAG_BITS = 32;
export const STAG_KEY_BITS = 8;
export const STAG_INDEX_BITS = STAG_BITS - STAG_KEY_BITS;
export const STAG_KEY_MASK = (1 << STAG_KEY_BITS) - 1;
export const STAG_INDEX_MASK = (1 << STAG_INDEX_BITS) - 1;
export const MAX_STAG = 2 ** STAG_BITS - 1;

function checkRange(what: string, value: number, max: number): void {
  if (!Number.isInteger(value) || value < 0 || value > max) {
    throw new RangeError(`${what} ${value} is not an integer in 0..0x${max.toString(16)}`);
  }
}

/** The 24-bit index (high bits) of an STag. */
export function stagIndex(stag: number): number {
  checkRange('STag', stag, MAX_STAG);
  return stag >>> STAG_KEY_BITS;
}

/** The 8-bit key (low bits) of an STag. */
export function stagKey(stag: number): number {
  checkRange('STag', stag, MAX_STAG);
  return stag & STAG_KEY_MASK;
}

/** Builds an STag from its 24-bit index and 8-bit key. */
export function makeStag(index: number, key: number): number {
  checkRange('STag index', index, STAG_INDEX_MASK);
  checkRange('STag key', key, STAG_KEY_MASK);
  // `>>> 0` keeps indices ≥ 0x800000 unsigned.
  return ((index << STAG_KEY_BITS) | key) >>> 0;
}
