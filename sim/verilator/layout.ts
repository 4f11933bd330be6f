/**
 * Where every port lives in the one buffer shared by the native model and TypeScript.
 *
 * The buffer is an array of 32-bit words (host byte order, which the bridge requires to be
 * little-endian, so octet i of a port is byte 4*offset+i):
 *
 *   header  | cycles (float64, words 0–1), $finish seen (word 2), edge deferred (word 3)
 *   now     | every input, then every output, in port-list order: the current values (the
 *           | outputs are stale while word 3 is set: SimModel commits the edge before reading them)
 *   pre     | the same slots again: the snapshot taken at the end of the last tick's low phase,
 *           | i.e. the values present at the rising edge, which decide handshakes
 *
 * Inputs come first so the native side can snapshot them with one contiguous copy. Both the
 * C++ wrapper (generated from this layout) and SimModel compute it with this one function.
 */
import { wordsFor, type PortDirection, type PortSpec } from './port-spec';

/** Four words keep the port areas 16-octet aligned. */
export const HEADER_WORDS = 4;
export const CYCLES_WORD = 0;
export const FINISH_WORD = 2;
/** Non-zero while the last tick's rising edge is deferred (wrapper-gen.ts): `now` outputs are stale. */
export const DEFERRED_WORD = 3;
export const OCTETS_PER_WORD = 4;

export interface PortSlot {
  readonly name: string;
  readonly direction: PortDirection;
  readonly width: number;
  /** 32-bit words the port occupies, least-significant word first. */
  readonly words: number;
  /** Word index of the current value. */
  readonly offset: number;
  /** Word index of the value at the last rising edge. */
  readonly preOffset: number;
  /** Mask of the valid bits of the most-significant word. */
  readonly topMask: number;
}

export interface BufferLayout {
  readonly slots: readonly PortSlot[];
  readonly nowBase: number;
  readonly preBase: number;
  /** Words of the inputs block at the start of each area. */
  readonly inputWords: number;
  /** Words of one area (inputs and outputs). */
  readonly areaWords: number;
  readonly totalWords: number;
}

const FULL_WORD_MASK = 0xffffffff;
const WORD_BITS = 32;

export const topWordMask = (width: number): number => {
  const bits = width % WORD_BITS;
  return bits === 0 ? FULL_WORD_MASK : (2 ** bits - 1) >>> 0;
};

export function layoutPorts(ports: readonly PortSpec[]): BufferLayout {
  const ordered = [...ports.filter((p) => p.direction === 'input'), ...ports.filter((p) => p.direction === 'output')];
  const areaWords = ordered.reduce((n, p) => n + wordsFor(p.width), 0);
  const inputWords = ordered.filter((p) => p.direction === 'input').reduce((n, p) => n + wordsFor(p.width), 0);
  const nowBase = HEADER_WORDS;
  const preBase = nowBase + areaWords;
  let cursor = 0;
  const slots = ordered.map((p): PortSlot => {
    const slot: PortSlot = {
      name: p.name,
      direction: p.direction,
      width: p.width,
      words: wordsFor(p.width),
      offset: nowBase + cursor,
      preOffset: preBase + cursor,
      topMask: topWordMask(p.width),
    };
    cursor += slot.words;
    return slot;
  });
  return { slots, nowBase, preBase, inputWords, areaWords, totalWords: preBase + areaWords };
}
