import type { Endian } from '../memory/host-memory';

/**
 * RFC 7306 masked atomics on 64-bit operands (spec/rdmap-extensions.md §4). Operands are integers:
 * wire fields are converted (big-endian) at the packet boundary and memory words in the target's
 * byte order at the memory port (§4.3); all masking and adding happens here, on integers.
 */

export const ATOMIC_OPERAND_BITS = 64n;
/** Operands are 64 bits; the target MUST be 64-bit aligned [RFC 7306 §5.1, §8.2]. */
export const ATOMIC_OPERAND_SIZE = 8;
export const MASK64 = (1n << ATOMIC_OPERAND_BITS) - 1n;
const ALIGN_MASK = BigInt(ATOMIC_OPERAND_SIZE - 1);

/** AOpCode, the low nibble of the Atomic Request's first word [RFC 7306 Fig. 5, §10.1]. */
export const AOpCode = Object.freeze({
  FETCH_ADD: 0x0,
  /** Swap in draft -00 only; reserved in -10 / RFC 7306 (spec/rdmap-extensions.md §8). */
  SWAP_DRAFT00: 0x1,
  CMP_SWAP: 0x2,
});
export type AOpCode = (typeof AOpCode)[keyof typeof AOpCode];

/** Masks to 64 bits; a negative operand is a caller bug, not a value the wire can carry. */
function u64(name: string, v: bigint): bigint {
  if (v < 0n) throw new RangeError(`${name} ${v} is negative; atomic operands are unsigned 64-bit`);
  return v & MASK64;
}

/**
 * FetchAdd [RFC 7306 §5.1.1]: the new memory value; the response returns `orig`. Each 1 in
 * `addMask` is the MSB of an independent field whose carry-out is dropped. Closed form
 * (spec/rdmap-extensions.md §4.1): clearing every field MSB in both operands stops carries at
 * field boundaries, then each MSB is rebuilt as carry-in XOR orig-MSB XOR add-MSB. It is one
 * 64-bit adder plus AND/XOR gates, the shape the RTL uses.
 */
export function fetchAdd(orig: bigint, addData: bigint, addMask: bigint): bigint {
  const o = u64('original', orig);
  const a = u64('Add Data', addData);
  const k = u64('Add Mask', addMask);
  const notK = ~k & MASK64;
  return (((o & notK) + (a & notK)) & MASK64) ^ ((o ^ a) & k);
}

/**
 * CmpSwap [RFC 7306 §5.1.2]: compares `orig` with Compare Data on the bits selected by Compare
 * Mask; on a match, replaces the bits selected by Swap Mask with Swap Data. `value` is the new
 * memory content (`orig` on a miss, which is not an error); the response returns `orig` either way.
 */
export function cmpSwap(
  orig: bigint,
  compareData: bigint,
  compareMask: bigint,
  swapData: bigint,
  swapMask: bigint,
): { value: bigint; match: boolean } {
  const o = u64('original', orig);
  const cd = u64('Compare Data', compareData);
  const cm = u64('Compare Mask', compareMask);
  const sd = u64('Swap Data', swapData);
  const sm = u64('Swap Mask', swapMask);
  const match = ((cd ^ o) & cm) === 0n;
  return { value: match ? (o & ~sm & MASK64) | (sd & sm) : o, match };
}

/**
 * The translated host address must be 64-bit aligned (spec/rdmap-extensions.md §4.4, check A9):
 * a misaligned target is not touched and the stream is terminated with 0x0/0x2/0x07.
 */
export function isAligned64(address: bigint): boolean {
  return (address & ALIGN_MASK) === 0n;
}

/** The 8 octets of a 64-bit value in the given byte order (wire fields are always big-endian). */
export function u64ToBytes(v: bigint, endian: Endian): Uint8Array {
  const b = new Uint8Array(ATOMIC_OPERAND_SIZE);
  new DataView(b.buffer).setBigUint64(0, u64('value', v), endian === 'little');
  return b;
}

/** The 64-bit value of exactly 8 octets in the given byte order. */
export function bytesToU64(b: Uint8Array, endian: Endian): bigint {
  if (b.length !== ATOMIC_OPERAND_SIZE) throw new RangeError(`expected ${ATOMIC_OPERAND_SIZE} octets, got ${b.length}`);
  return new DataView(b.buffer, b.byteOffset, ATOMIC_OPERAND_SIZE).getBigUint64(0, endian === 'little');
}
