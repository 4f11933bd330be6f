/** Octets as lowercase hex, for messages and digests (a view of part of a buffer prints only that part). */
export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');

/** A 32-bit value as 0x-prefixed, 8-digit hex. */
export const hex32 = (v: number): string => `0x${(v >>> 0).toString(16).padStart(8, '0')}`;

/**
 * Hex octets as the project writes them: two digits per octet, either case, with an optional
 * 0x/0X prefix (integer fields take "0x…", so octet strings do too). No separators.
 */
export const HEX_OCTETS = /^(?:0[xX])?(?:[0-9a-fA-F]{2})*$/;
const HEX_PREFIX = /^0[xX]/;

/**
 * The one reader of hex octet strings (scenario `data`, test vectors). Throws a RangeError on
 * anything HEX_OCTETS refuses: Buffer.from(s, 'hex') alone would silently stop at the first bad
 * digit and return fewer octets.
 */
export function parseHexOctets(text: string): Uint8Array {
  if (!HEX_OCTETS.test(text)) throw new RangeError(`expected hex octets (two digits each, optional 0x prefix), got ${JSON.stringify(text)}`);
  return new Uint8Array(Buffer.from(text.replace(HEX_PREFIX, ''), 'hex'));
}
