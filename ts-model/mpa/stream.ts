import { FPDU_ALIGN, MARKER_PERIOD } from './constants';
import type { MpaOptions } from './options';
import { DEFAULT_MPA_OPTIONS } from './options';
import { checkSeq, seqDiff } from './sequence';
import { hex32 } from '../util/hex';

/**
 * What both ends of one MPA direction agree on once the connection is set up (spec/mpa.md §4.2,
 * §4.3, §3.4): where full operation starts (S0), whether markers and CRC are on, and the
 * interpretation options.
 */
export interface MpaStreamConfig {
  /** TCP sequence number of the first full-operation octet of this direction. */
  readonly s0: number;
  /** Markers in this direction (the receiver asked for them with M = 1). */
  readonly markers: boolean;
  /** CRC-32C negotiated (Request.C or Reply.C). */
  readonly crc: boolean;
  /** Where framing or deframing starts; S0 by default. Must be 4-aligned relative to S0. */
  readonly seq?: number;
  readonly options?: MpaOptions;
}

export interface ResolvedStream {
  readonly s0: number;
  readonly markers: boolean;
  readonly crc: boolean;
  readonly seq: number;
  readonly options: MpaOptions;
}

export function resolveStream(cfg: MpaStreamConfig): ResolvedStream {
  checkSeq('s0', cfg.s0);
  const seq = cfg.seq ?? cfg.s0;
  checkSeq('seq', seq);
  if (seqDiff(seq, cfg.s0) % FPDU_ALIGN !== 0) {
    throw new RangeError(`seq ${hex32(seq)} is not 4-aligned relative to S0 ${hex32(cfg.s0)} (spec/mpa.md §4.5)`);
  }
  return { s0: cfg.s0, markers: cfg.markers, crc: cfg.crc, seq, options: cfg.options ?? DEFAULT_MPA_OPTIONS };
}

/** Offset of `seq` in its 512-octet marker period: 0 means a marker starts here (spec/mpa.md §4.3). */
export const markerPhase = (seq: number, s0: number): number => seqDiff(seq, s0) & (MARKER_PERIOD - 1);

