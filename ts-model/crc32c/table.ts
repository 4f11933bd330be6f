import type { CrcParams } from './params';
import { CRC32C, reflect } from './params';

/**
 * Table-driven CRC for reflected 32-bit CRCs, slicing-by-16: sixteen 256-entry tables let one
 * loop iteration fold 16 octets (four 32-bit loads) with 16 independent look-ups. This is the model's hot path
 * (every FPDU is framed and deframed through it).
 */
export interface CrcEngine {
  readonly params: CrcParams;
  /** Register value to start from. */
  readonly init: number;
  /** Feeds `data[start, end)` into the raw register and returns the new register. */
  update(register: number, data: Uint8Array, start?: number, end?: number): number;
  /** Raw register → CRC value. */
  finish(register: number): number;
  /** CRC of a whole buffer. */
  compute(data: Uint8Array, start?: number, end?: number): number;
}

const SLICES = 16;
/** Below this many octets the word path's set-up costs more than it saves. */
const WORD_PATH_MIN = 64;
/** The word path reads octets through an Int32Array, which is host-endian. */
const LITTLE_ENDIAN_HOST = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

function buildTables(p: CrcParams): Int32Array {
  if (!p.reflectIn || !p.reflectOut) {
    throw new Error('table-driven CRC supports reflected CRCs only; use referenceUpdate');
  }
  const poly = reflect(p.poly, 32);
  const t = new Int32Array(SLICES * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let b = 0; b < 8; b++) c = c & 1 ? (c >>> 1) ^ poly : c >>> 1;
    t[n] = c;
  }
  // t[k][n] = CRC register after n followed by k zero octets.
  for (let k = 1; k < SLICES; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[(k - 1) * 256 + n]!;
      t[k * 256 + n] = (prev >>> 8) ^ t[prev & 0xff]!;
    }
  }
  return t;
}

export function makeCrcEngine(p: CrcParams): CrcEngine {
  const t = buildTables(p);
  const xorOut = p.xorOut;

  const T = Array.from({ length: SLICES }, (_, k) => t.subarray(k * 256, (k + 1) * 256));
  const [T0, T1, T2, T3, T4, T5, T6, T7, T8, T9, T10, T11, T12, T13, T14, T15] = T as [
    Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array,
    Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array, Int32Array,
  ];

  function bytes(crc: number, data: Uint8Array, i: number, end: number): number {
    for (; i < end; i++) crc = (crc >>> 8) ^ T0[(crc ^ data[i]!) & 0xff]!;
    return crc;
  }

  function update(register: number, data: Uint8Array, start = 0, end = data.length): number {
    let crc = register | 0;
    if (end - start < WORD_PATH_MIN || !LITTLE_ENDIAN_HOST) return bytes(crc, data, start, end) >>> 0;
    // Align to 4 octets, then fold 16 octets per iteration from four 32-bit loads.
    const head = start + ((4 - ((data.byteOffset + start) & 3)) & 3);
    crc = bytes(crc, data, start, head);
    const nWords = (end - head) >> 2;
    const w = wordsOf(data.buffer);
    const first = (data.byteOffset + head) >> 2;
    const stop = first + (nWords & ~3);
    for (let j = first; j < stop; j += 4) {
      crc ^= w[j]!;
      const b = w[j + 1]!;
      const c = w[j + 2]!;
      const d = w[j + 3]!;
      crc =
        T15[crc & 0xff]! ^ T14[(crc >>> 8) & 0xff]! ^ T13[(crc >>> 16) & 0xff]! ^ T12[crc >>> 24]! ^
        T11[b & 0xff]! ^ T10[(b >>> 8) & 0xff]! ^ T9[(b >>> 16) & 0xff]! ^ T8[b >>> 24]! ^
        T7[c & 0xff]! ^ T6[(c >>> 8) & 0xff]! ^ T5[(c >>> 16) & 0xff]! ^ T4[c >>> 24]! ^
        T3[d & 0xff]! ^ T2[(d >>> 8) & 0xff]! ^ T1[(d >>> 16) & 0xff]! ^ T0[d >>> 24]!;
    }
    return bytes(crc, data, head + (nWords & ~3) * 4, end) >>> 0;
  }

  // One Int32Array view per ArrayBuffer, kept while calls stay on the same buffer (the model
  // carves its buffers from slabs): creating a view per call costs as much as 200 octets of CRC.
  let viewed: ArrayBufferLike | null = null;
  let view: Int32Array<ArrayBufferLike> = new Int32Array(0);
  function wordsOf(buffer: ArrayBufferLike): Int32Array {
    if (buffer !== viewed || view.length !== buffer.byteLength >> 2) {
      viewed = buffer;
      view = new Int32Array(buffer, 0, buffer.byteLength >> 2);
    }
    return view;
  }

  const finish = (register: number): number => (register ^ xorOut) >>> 0;

  return Object.freeze({
    params: p,
    init: p.init >>> 0,
    update,
    finish,
    compute: (data: Uint8Array, start = 0, end = data.length) => finish(update(p.init, data, start, end)),
  });
}

/** The MPA CRC engine (CRC-32C). */
export const crc32cEngine: CrcEngine = makeCrcEngine(CRC32C);
