/**
 * CRC parameters, Rocksoft/Williams model. `CRC32C` is the single source of truth for the
 * model's software CRC and for the GF(2) matrices the hardware generator turns into XOR trees
 * (the Amaranth `lib/crc` idea): nothing else in the project spells out a polynomial.
 *
 * MPA uses CRC-32C (Castagnoli), the iSCSI CRC (RFC 5044; RFC 3720 App. B.4; spec/mpa.md §3.1).
 */
export interface CrcParams {
  /** Register width in bits; this project only needs 32. */
  readonly width: 32;
  /** Generator polynomial, normal (MSB-first) form without the x^width term. */
  readonly poly: number;
  /** Octets enter least-significant bit first. */
  readonly reflectIn: boolean;
  /** The register is bit-reversed before the final XOR. */
  readonly reflectOut: boolean;
  /** Register value before the first octet. */
  readonly init: number;
  /** XORed into the register to give the CRC value. */
  readonly xorOut: number;
  /** CRC of the ASCII octets "123456789". */
  readonly check: number;
  /**
   * Raw register (before xorOut) after feeding a message followed by its own CRC in wire
   * order; a receiver can check this constant instead of comparing the CRC field.
   */
  readonly residue: number;
}

export const CRC32C: CrcParams = Object.freeze({
  width: 32,
  poly: 0x1edc6f41,
  reflectIn: true,
  reflectOut: true,
  init: 0xffffffff,
  xorOut: 0xffffffff,
  check: 0xe3069283,
  residue: 0xb798b438,
});

/** Bit-reverses the low `bits` bits of `v`. */
export function reflect(v: number, bits: number): number {
  let r = 0;
  for (let i = 0; i < bits; i++) r |= ((v >>> i) & 1) << (bits - 1 - i);
  return r >>> 0;
}
