import type { CrcParams } from './params';
import { referenceUpdate } from './reference';

/**
 * GF(2) update matrices for a datapath that feeds `nBytes` octets per cycle:
 *
 *   next = S · state ⊕ D · data
 *
 * `state` is the raw CRC register (the domain of `referenceUpdate`), `data` is the word with
 * octet i (stream order) in bits [8i+7 : 8i] — the AXI4-Stream lane convention, lane 0 first on
 * the wire. The CRC register update is linear in (state, data) once init and xorOut are set
 * aside, so each column is the software CRC of a unit vector (as Amaranth's `lib/crc` does).
 * The hardware generator turns every row into an XOR tree.
 */
export interface CrcMatrices {
  readonly params: CrcParams;
  /** Octets consumed per update. */
  readonly nBytes: number;
  /** Row i: mask of the state bits XORed into next-state bit i. */
  readonly stateRows: readonly number[];
  /** Row i: mask of the data bits (bit 8·lane + b) XORed into next-state bit i. */
  readonly dataRows: readonly bigint[];
}

export function deriveCrcMatrices(p: CrcParams, nBytes: number): CrcMatrices {
  if (!Number.isInteger(nBytes) || nBytes < 1) throw new RangeError(`nBytes must be a positive integer, got ${nBytes}`);
  const zeros = new Uint8Array(nBytes);
  const stateRows = new Array<number>(32).fill(0);
  const dataRows = new Array<bigint>(32).fill(0n);
  // Column j of S: the update of unit state e_j with an all-zero word.
  for (let j = 0; j < 32; j++) {
    const col = referenceUpdate(p, (1 << j) >>> 0, zeros);
    for (let i = 0; i < 32; i++) if ((col >>> i) & 1) stateRows[i] = (stateRows[i]! | (1 << j)) >>> 0;
  }
  // Column k of D: the update of a zero state with unit data bit k.
  const word = new Uint8Array(nBytes);
  for (let k = 0; k < nBytes * 8; k++) {
    word.fill(0);
    word[k >> 3] = 1 << (k & 7);
    const col = referenceUpdate(p, 0, word);
    for (let i = 0; i < 32; i++) if ((col >>> i) & 1) dataRows[i] = dataRows[i]! | (1n << BigInt(k));
  }
  return Object.freeze({ params: p, nBytes, stateRows: Object.freeze(stateRows), dataRows: Object.freeze(dataRows) });
}

/**
 * The matrices a `width`-byte datapath needs: index k−1 holds the update for a beat whose first
 * k lanes are valid (k = 1..width), which covers every last beat of a frame.
 */
export function deriveCrcMatrixSet(p: CrcParams, width: number): readonly CrcMatrices[] {
  return Object.freeze(Array.from({ length: width }, (_, i) => deriveCrcMatrices(p, i + 1)));
}

/** Evaluates the matrices in software (what the XOR trees compute). */
export function applyCrcMatrices(m: CrcMatrices, state: number, data: Uint8Array): number {
  if (data.length !== m.nBytes) throw new RangeError(`expected ${m.nBytes} octets, got ${data.length}`);
  let word = 0n;
  for (let i = data.length - 1; i >= 0; i--) word = (word << 8n) | BigInt(data[i]!);
  let next = 0;
  for (let i = 0; i < 32; i++) {
    const bit = parity32(m.stateRows[i]! & state) ^ parityBig(m.dataRows[i]! & word);
    next |= bit << i;
  }
  return next >>> 0;
}

function parity32(v: number): number {
  v ^= v >>> 16;
  v ^= v >>> 8;
  v ^= v >>> 4;
  v ^= v >>> 2;
  v ^= v >>> 1;
  return v & 1;
}

function parityBig(v: bigint): number {
  let p = 0;
  while (v) {
    p ^= parity32(Number(v & 0xffffffffn));
    v >>= 32n;
  }
  return p;
}
