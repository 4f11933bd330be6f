import { crc32cEngine, crcWireOctets, readCrcField } from '../crc32c';
import { CRC_SIZE, FPDU_ALIGN, MAX_ULPDU_LENGTH, ULPDU_LENGTH_SIZE } from './constants';

/**
 * Marker-free FPDU layout (spec/mpa.md §2):
 *
 *   ULPDU_Length (2, BE) | ULPDU (L) | PAD (0..3 zero octets) | CRC (4, LS octet first)
 */

/** PAD octets after a ULPDU of `ulpduLength` octets: (−(L + 2)) mod 4. */
export function padLength(ulpduLength: number): number {
  return (FPDU_ALIGN - ((ulpduLength + ULPDU_LENGTH_SIZE) % FPDU_ALIGN)) % FPDU_ALIGN;
}

/** Marker-free FPDU length: 2 + L + pad + 4, a multiple of 4, at least 8. */
export function fpduLength(ulpduLength: number): number {
  return ULPDU_LENGTH_SIZE + ulpduLength + padLength(ulpduLength) + CRC_SIZE;
}

export function checkUlpduLength(length: number): void {
  if (!Number.isInteger(length) || length < 0 || length > MAX_ULPDU_LENGTH) {
    throw new RangeError(`ULPDU_Length must be 0..${MAX_ULPDU_LENGTH}, got ${length}`);
  }
}

/**
 * Encodes a marker-free FPDU. With `crc` false the CRC field is sent as 0 (spec/README.md #6).
 */
export function encodeFpdu(ulpdu: Uint8Array, crc: boolean): Uint8Array {
  checkUlpduLength(ulpdu.length);
  const body = ULPDU_LENGTH_SIZE + ulpdu.length + padLength(ulpdu.length);
  const out = new Uint8Array(body + CRC_SIZE);
  out[0] = ulpdu.length >>> 8;
  out[1] = ulpdu.length & 0xff;
  out.set(ulpdu, ULPDU_LENGTH_SIZE);
  if (crc) out.set(crcWireOctets(crc32cEngine.compute(out, 0, body)), body);
  return out;
}

export interface DecodedFpdu {
  readonly ulpdu: Uint8Array;
  /** Octets consumed. */
  readonly length: number;
  /** The CRC field as sent, and whether it matches (always true when CRC is off). */
  readonly crcField: number;
  readonly crcOk: boolean;
}

/**
 * Decodes one marker-free FPDU at the start of `buf`, or returns null when `buf` holds less
 * than a whole FPDU. For streams with markers, cut points and error reporting use `MpaDeframer`.
 */
export function decodeFpdu(buf: Uint8Array, crc: boolean): DecodedFpdu | null {
  if (buf.length < ULPDU_LENGTH_SIZE) return null;
  const ulpduLength = (buf[0]! << 8) | buf[1]!;
  const length = fpduLength(ulpduLength);
  if (buf.length < length) return null;
  const body = length - CRC_SIZE;
  const crcField = readCrcField(buf, body);
  const crcOk = !crc || crc32cEngine.compute(buf, 0, body) === crcField;
  return { ulpdu: buf.slice(ULPDU_LENGTH_SIZE, ULPDU_LENGTH_SIZE + ulpduLength), length, crcField, crcOk };
}
