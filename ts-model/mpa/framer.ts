import { crc32cEngine, writeCrcField } from '../crc32c';
import { allocateBytes } from '../util/slab';
import { CRC_SIZE, MARKER_PERIOD, MARKER_SIZE, ULPDU_LENGTH_SIZE } from './constants';

/** Marker-free octets between two markers. */
const DATA_PER_PERIOD = MARKER_PERIOD - MARKER_SIZE;
import { checkUlpduLength, fpduLength } from './fpdu';
import type { MpaStreamConfig, ResolvedStream } from './stream';
import { markerPhase, resolveStream } from './stream';
import { seqAdd, seqDiff } from './sequence';

/** One marker as placed on the wire (spec/mpa.md §4.4, §4.5). */
export interface PlacedMarker {
  readonly seq: number;
  readonly fpduptr: number;
  /** Offset of the marker's first octet in `FramedFpdu.wire`. */
  readonly wireOffset: number;
  /** A marker at the FPDU boundary (case a), sent in front of the FPDU. */
  readonly leading: boolean;
}

export interface FramedFpdu {
  /** The FPDU's octets on the wire, markers included. */
  readonly wire: Uint8Array;
  /** Sequence number of `wire[0]` (a leading marker, if there is one). */
  readonly startSeq: number;
  /** Sequence number of the ULPDU_Length field. */
  readonly ulpduLengthSeq: number;
  readonly ulpduLength: number;
  readonly padLength: number;
  /** The CRC value (0 when CRC is off), and where its field starts in `wire`. */
  readonly crc: number;
  readonly crcOffset: number;
  /** First octet of `wire` the CRC covers (4 for a leading marker left out, spec/mpa.md §4.6). */
  readonly crcSpanStart: number;
  readonly markers: readonly PlacedMarker[];
}

/**
 * The transmit side of one MPA direction: turns ULPDUs into FPDUs at their place in TCP sequence
 * space, inserting a marker wherever `(seq − S0) mod 512 = 0` (spec/mpa.md §4.3), with FPDUPTR
 * pointing back at the FPDU's ULPDU_Length (§4.4) and the CRC covering the markers in the FPDU's
 * span, a leading marker by default (§3.3, §4.6).
 */
export class MpaFramer {
  private readonly cfg: ResolvedStream;
  private next: number;

  constructor(config: MpaStreamConfig) {
    this.cfg = resolveStream(config);
    this.next = this.cfg.seq;
  }

  /** Sequence number of the next octet this framer will send. */
  get seq(): number {
    return this.next;
  }

  get config(): ResolvedStream {
    return this.cfg;
  }

  /** On-wire length of an FPDU carrying `ulpduLength` octets if it were framed next. */
  wireLength(ulpduLength: number): number {
    return fpduLength(ulpduLength) + MARKER_SIZE * this.markersAhead(fpduLength(ulpduLength));
  }

  /** Frames one ULPDU (one DDP segment) and advances the stream. */
  frame(ulpdu: Uint8Array): FramedFpdu {
    checkUlpduLength(ulpdu.length);
    const { markers, crc, options, s0 } = this.cfg;
    const L = ulpdu.length;
    const mfLength = fpduLength(L);
    const nMarkers = this.markersAhead(mfLength);
    const wire = allocateBytes(mfLength + MARKER_SIZE * nMarkers);
    const startSeq = this.next;
    const placed: PlacedMarker[] = [];

    const leading = markers && markerPhase(startSeq, s0) === 0;
    const ulpduLengthSeq = seqAdd(startSeq, leading ? MARKER_SIZE : 0);
    const ref = options.fpduptrRef === 'ulpduLength' ? ulpduLengthSeq : startSeq;

    // Lay out ULPDU_Length | ULPDU contiguously after the leading marker (if any), then open a
    // 4-octet gap for each later marker by shifting the run after it, last run first. The buffer
    // is zero, so PAD and the CRC placeholder need no writes; copyWithin allocates nothing.
    const lead = leading ? MARKER_SIZE : 0;
    wire[lead] = L >>> 8;
    wire[lead + 1] = L & 0xff;
    wire.set(ulpdu, lead + ULPDU_LENGTH_SIZE);
    if (leading) placed.push({ seq: startSeq, fpduptr: 0, wireOffset: 0, leading: true });
    const inner = nMarkers - (leading ? 1 : 0);
    // Marker-free octet before which the first later marker falls; then one every 508 octets.
    const first = MARKER_PERIOD - (leading ? MARKER_SIZE : markerPhase(startSeq, s0));
    const body = mfLength - CRC_SIZE;
    for (let k = inner; k >= 1; k--) {
      const from = first + (k - 1) * DATA_PER_PERIOD;
      const to = Math.min(k === inner ? body : from + DATA_PER_PERIOD, body);
      if (to > from) wire.copyWithin(lead + from + MARKER_SIZE * k, lead + from, lead + to);
    }
    for (let k = 1; k <= inner; k++) {
      const wireOffset = lead + first + (k - 1) * DATA_PER_PERIOD + MARKER_SIZE * (k - 1);
      const seq = seqAdd(startSeq, wireOffset);
      const fpduptr = seqDiff(seq, ref);
      if (fpduptr > 0xffff) {
        throw new RangeError(`FPDUPTR ${fpduptr} does not fit 16 bits: ULPDU of ${L} octets is too long for markers`);
      }
      wire[wireOffset] = 0;
      wire[wireOffset + 1] = 0;
      wire[wireOffset + 2] = fpduptr >>> 8;
      wire[wireOffset + 3] = fpduptr & 0xff;
      placed.push({ seq, fpduptr, wireOffset, leading: false });
    }

    // The CRC field is the last 4 octets: FPDUs and markers are 4-aligned, so no marker splits it.
    const crcOffset = wire.length - CRC_SIZE;
    const crcSpanStart = leading && !options.leadMarkerInCrc ? MARKER_SIZE : 0;
    let crcValue = 0;
    if (crc) {
      crcValue = crc32cEngine.compute(wire, crcSpanStart, crcOffset);
      writeCrcField(wire, crcOffset, crcValue);
    }
    this.next = seqAdd(startSeq, wire.length);
    return {
      wire,
      startSeq,
      ulpduLengthSeq,
      ulpduLength: L,
      padLength: mfLength - ULPDU_LENGTH_SIZE - L - CRC_SIZE,
      crc: crcValue,
      crcOffset,
      crcSpanStart,
      markers: placed,
    };
  }

  /** Markers that fall inside the next FPDU's span of `mfLength` marker-free octets. */
  private markersAhead(mfLength: number): number {
    if (!this.cfg.markers) return 0;
    const phase = markerPhase(this.next, this.cfg.s0);
    // Markers sit before marker-free octet j where the wire phase wraps; a marker exactly at the
    // end belongs to the next FPDU (it is that FPDU's leading marker).
    const first = phase === 0 ? 0 : MARKER_PERIOD - phase;
    if (first >= mfLength) return 0;
    return 1 + Math.floor((mfLength - 1 - first) / DATA_PER_PERIOD);
  }
}
