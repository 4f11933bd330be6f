/**
 * Converting between JavaScript values (bigint, number, little-endian octets) and a port's
 * 32-bit words in the shared buffer (least-significant word first). A value that does not fit
 * the port is a RangeError naming the port: silently truncating would hide test bugs.
 */
import { OCTETS_PER_WORD } from './layout';
import { WORD_BITS } from './port-spec';

export type PortValue = bigint | number | Uint8Array;

/** What the encoders need to know about a port. */
export interface PortShape {
  readonly name: string;
  readonly width: number;
  readonly words: number;
}

const WORD_SHIFT = BigInt(WORD_BITS);
const WORD_MASK = 0xffffffffn;
const WORD_RANGE = 2 ** WORD_BITS;
const OCTET_BITS = 8;
/** Every non-negative safe integer fits in this many bits. */
const SAFE_INTEGER_BITS = 53;

const tooWide = (port: PortShape, shown: string): RangeError =>
  new RangeError(`value ${shown} does not fit port ${port.name} (${port.width} bits)`);

function writeBigInt(words: Uint32Array, offset: number, port: PortShape, value: bigint): void {
  if (value < 0n || value >> BigInt(port.width) !== 0n) throw tooWide(port, `0x${value.toString(16)}`);
  let v = value;
  for (let i = 0; i < port.words; i++) {
    words[offset + i] = Number(v & WORD_MASK);
    v >>= WORD_SHIFT;
  }
}

function writeNumber(words: Uint32Array, offset: number, port: PortShape, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`value ${value} for port ${port.name} is not a non-negative safe integer (use a bigint for wide values)`);
  }
  if (port.width < SAFE_INTEGER_BITS && value >= 2 ** port.width) throw tooWide(port, String(value));
  let v = value;
  for (let i = 0; i < port.words; i++) {
    words[offset + i] = v % WORD_RANGE;
    v = Math.floor(v / WORD_RANGE);
  }
}

function writeOctets(words: Uint32Array, bytes: Uint8Array, offset: number, port: PortShape, value: Uint8Array): void {
  const octets = Math.ceil(port.width / OCTET_BITS);
  const spare = octets * OCTET_BITS - port.width;
  const last = value[octets - 1] ?? 0;
  if (value.length > octets || (value.length === octets && last >> (OCTET_BITS - spare) !== 0)) {
    throw tooWide(port, `of ${value.length} octets`);
  }
  words.fill(0, offset, offset + port.words);
  bytes.set(value, offset * OCTETS_PER_WORD);
}

/** Writes `value` into the port's words at `offset` (`bytes` is the same buffer as octets). */
export function encodePortValue(words: Uint32Array, bytes: Uint8Array, offset: number, port: PortShape, value: PortValue): void {
  if (typeof value === 'bigint') writeBigInt(words, offset, port, value);
  else if (typeof value === 'number') writeNumber(words, offset, port, value);
  else if (value instanceof Uint8Array) writeOctets(words, bytes, offset, port, value);
  else throw new TypeError(`value for port ${port.name} must be a bigint, a number or a Uint8Array`);
}

export function decodeBigInt(words: Uint32Array, offset: number, count: number): bigint {
  let v = 0n;
  for (let i = count - 1; i >= 0; i--) v = (v << WORD_SHIFT) | BigInt(words[offset + i] ?? 0);
  return v;
}
