import { crc32cEngine } from '../crc32c';
import { allocateBytes } from '../util/slab';
import {
  CRC_SIZE,
  ETYPE_MPA,
  LAYER_LLP,
  MARKER_PERIOD,
  MARKER_SIZE,
  MpaErrorCode,
  ULPDU_LENGTH_SIZE,
} from './constants';
import { padLength } from './fpdu';
import type { MpaStreamConfig, ResolvedStream } from './stream';
import { hex32 } from '../util/hex';
import { markerPhase, resolveStream } from './stream';
import { seqAdd, seqDiff } from './sequence';

/** A ULPDU delivered to DDP. */
export interface DeliveredFpdu {
  readonly kind: 'fpdu';
  /** 0-based FPDU number in this stream. */
  readonly index: number;
  /** Sequence number of the FPDU's first wire octet (its leading marker, if any). */
  readonly startSeq: number;
  readonly ulpduLengthSeq: number;
  readonly ulpdu: Uint8Array;
  /** Wire octets the FPDU occupied, markers included. */
  readonly wireLength: number;
}

/** The first MPA error of the stream; nothing is delivered after it (spec/mpa.md §6). */
export interface MpaStreamError {
  readonly kind: 'error';
  /** The FPDU the error belongs to (the number it would have had). */
  readonly index: number;
  readonly startSeq: number;
  /** Terminate Layer/EType/Code: 0x2/0x0/code. */
  readonly layer: typeof LAYER_LLP;
  readonly etype: typeof ETYPE_MPA;
  readonly code: MpaErrorCode;
  readonly reason: string;
}

/**
 * With `silentDropOnCrcError`: the FPDU was discarded instead of reported. The deframer has
 * rewound to `startSeq`; the transport must deliver the stream again from there (TCP retransmits
 * the unacknowledged segment).
 */
export interface DiscardedFpdu {
  readonly kind: 'discard';
  readonly index: number;
  readonly startSeq: number;
  readonly code: MpaErrorCode;
  readonly reason: string;
}

export type DeframeEvent = DeliveredFpdu | MpaStreamError | DiscardedFpdu;

const enum Phase {
  Length,
  Body,
  Crc,
}

/**
 * The receive side of one MPA direction. Takes the in-order TCP payload cut at any points (one
 * octet at a time works), strips markers by sequence position, never by content (§4.8),
 * delineates FPDUs by ULPDU_Length and runs the receive checks in the spec's order (§6):
 *
 *   ULPDU_Length ≤ maxUlpduLength (2/0/0x03) → CRC (2/0/0x02) → every FPDUPTR (2/0/0x03)
 *
 * After the first error the stream is stopped: every later octet is ignored.
 */
export class MpaDeframer {
  private readonly cfg: ResolvedStream;
  private next: number;
  private delivered = 0;
  private failed: MpaStreamError | null = null;

  // The marker being received (octets 0..3 of it).
  private readonly markerBuf = new Uint8Array(MARKER_SIZE);
  private markerSeq = 0;
  private markerLeading = false;

  // The FPDU being received.
  private phase = Phase.Length;
  private started = false;
  private startSeq = 0;
  private ulpduLengthSeq = 0;
  private lengthHave = 0;
  private ulpduLength = 0;
  private ulpdu: Uint8Array = new Uint8Array(0);
  private bodyNeed = 0;
  private bodyHave = 0;
  private readonly crcBuf = new Uint8Array(CRC_SIZE);
  private crcHave = 0;
  private crcRegister = 0;
  // Octets of the current chunk still to go into the CRC: contiguous runs (markers and FPDU
  // octets alike) are merged so that a whole FPDU costs one CRC call.
  private crcChunk: Uint8Array | null = null;
  private crcFrom = 0;
  private crcTo = 0;
  private markerFault: string | null = null;

  constructor(config: MpaStreamConfig) {
    this.cfg = resolveStream(config);
    this.next = this.cfg.seq;
  }

  /** Sequence number of the next octet expected. */
  get seq(): number {
    return this.next;
  }

  /** FPDUs delivered so far. */
  get count(): number {
    return this.delivered;
  }

  /** The error that stopped the stream, if any. */
  get error(): MpaStreamError | null {
    return this.failed;
  }

  /** Feeds the next in-order octets of the stream. */
  push(chunk: Uint8Array): DeframeEvent[] {
    const events: DeframeEvent[] = [];
    if (this.failed) return events;
    const { markers, s0 } = this.cfg;
    let i = 0;
    const n = chunk.length;
    while (i < n) {
      const phase = markers ? markerPhase(this.next, s0) : MARKER_SIZE;
      let taken: number;
      if (phase < MARKER_SIZE) {
        taken = this.takeMarker(chunk, i, Math.min(n - i, MARKER_SIZE - phase), phase);
      } else {
        const room = markers ? MARKER_PERIOD - phase : n - i;
        taken = this.takeFpdu(chunk, i, Math.min(n - i, room), events);
      }
      if (taken < 0) break; // stopped, or rewound for a retransmission
      i += taken;
    }
    this.flushCrc();
    return events;
  }

  /**
   * The stream has ended (TCP FIN or loss). Mid-FPDU, that is error 0x01, a local report only
   * (spec/mpa.md §6).
   */
  end(): DeframeEvent[] {
    if (this.failed || !this.midFpdu()) return [];
    return [this.fail(MpaErrorCode.TCP_CLOSED, 'the stream ended inside an FPDU')];
  }

  private midFpdu(): boolean {
    return this.started || (this.cfg.markers && markerPhase(this.next, this.cfg.s0) % MARKER_SIZE !== 0);
  }

  private takeMarker(chunk: Uint8Array, at: number, count: number, phase: number): number {
    if (phase === 0) {
      this.markerSeq = this.next;
      // A marker before any octet of the FPDU is its leading marker (case a, spec/mpa.md §4.5).
      this.markerLeading = this.phase === Phase.Length && this.lengthHave === 0 && !this.started;
      if (this.markerLeading) this.beginFpdu();
    }
    for (let k = 0; k < count; k++) this.markerBuf[phase + k] = chunk[at + k]!;
    if (!this.markerLeading || this.cfg.options.leadMarkerInCrc) this.absorb(chunk, at, count);
    else this.next = seqAdd(this.next, count);
    if (phase + count === MARKER_SIZE) this.checkMarker();
    return count;
  }

  private checkMarker(): void {
    if (!this.cfg.options.checkMarkers || this.markerFault) return;
    const fpduptr = (this.markerBuf[2]! << 8) | this.markerBuf[3]!;
    // A leading marker points at the octet after it with FPDUPTR 0; any other marker points back
    // at this FPDU's reference octet (spec/mpa.md §4.4). The 32-bit distance must match exactly.
    const expected = this.markerLeading
      ? 0
      : seqDiff(this.markerSeq, this.cfg.options.fpduptrRef === 'ulpduLength' ? this.ulpduLengthSeq : this.startSeq);
    if (fpduptr !== expected) {
      this.markerFault = `marker at ${hex32(this.markerSeq)} has FPDUPTR ${fpduptr}, expected ${expected}`;
    }
  }

  private beginFpdu(): void {
    this.started = true;
    this.startSeq = this.next;
    this.crcChunk = null;
    this.crcRegister = crc32cEngine.init;
  }

  /** Consumes up to `count` octets of FPDU (no marker among them); −1 when the stream stopped. */
  private takeFpdu(chunk: Uint8Array, at: number, count: number, events: DeframeEvent[]): number {
    let taken = 0;
    switch (this.phase) {
      case Phase.Length: {
        if (!this.started) this.beginFpdu();
        if (this.lengthHave === 0) this.ulpduLengthSeq = this.next;
        taken = Math.min(count, ULPDU_LENGTH_SIZE - this.lengthHave);
        for (let k = 0; k < taken; k++) this.ulpduLength = (this.ulpduLength << 8) | chunk[at + k]!;
        this.lengthHave += taken;
        this.absorb(chunk, at, taken);
        if (this.lengthHave === ULPDU_LENGTH_SIZE) {
          const max = this.cfg.options.maxUlpduLength;
          if (this.ulpduLength > max) {
            events.push(this.fail(MpaErrorCode.MARKER_MISMATCH, `ULPDU_Length ${this.ulpduLength} exceeds the accepted maximum ${max}`));
            return -1;
          }
          this.ulpdu = allocateBytes(this.ulpduLength);
          this.bodyNeed = this.ulpduLength + padLength(this.ulpduLength);
          this.bodyHave = 0;
          this.phase = this.bodyNeed ? Phase.Body : Phase.Crc;
        }
        return taken;
      }
      case Phase.Body: {
        taken = Math.min(count, this.bodyNeed - this.bodyHave);
        const end = Math.min(this.bodyHave + taken, this.ulpduLength);
        if (end > this.bodyHave) this.ulpdu.set(chunk.subarray(at, at + end - this.bodyHave), this.bodyHave);
        this.bodyHave += taken;
        this.absorb(chunk, at, taken);
        if (this.bodyHave === this.bodyNeed) this.phase = Phase.Crc;
        return taken;
      }
      case Phase.Crc: {
        taken = Math.min(count, CRC_SIZE - this.crcHave);
        this.crcBuf.set(chunk.subarray(at, at + taken), this.crcHave);
        this.crcHave += taken;
        this.next = seqAdd(this.next, taken);
        if (this.crcHave < CRC_SIZE) return taken;
        return this.completeFpdu(events) ? taken : -1;
      }
      default:
        throw new Error('unreachable');
    }
  }

  /** FPDU octets before the CRC field: into the CRC, and the stream advances. */
  private absorb(chunk: Uint8Array, at: number, count: number): void {
    if (this.cfg.crc) {
      if (this.crcChunk === chunk && this.crcTo === at) {
        this.crcTo = at + count;
      } else {
        this.flushCrc();
        this.crcChunk = chunk;
        this.crcFrom = at;
        this.crcTo = at + count;
      }
    }
    this.next = seqAdd(this.next, count);
  }

  private flushCrc(): void {
    if (this.crcChunk) this.crcRegister = crc32cEngine.update(this.crcRegister, this.crcChunk, this.crcFrom, this.crcTo);
    this.crcChunk = null;
  }

  private completeFpdu(events: DeframeEvent[]): boolean {
    this.flushCrc();
    if (this.cfg.crc) {
      const got = (this.crcBuf[0]! | (this.crcBuf[1]! << 8) | (this.crcBuf[2]! << 16) | (this.crcBuf[3]! << 24)) >>> 0;
      const want = crc32cEngine.finish(this.crcRegister);
      if (got !== want) {
        return this.reject(events, MpaErrorCode.CRC_MISMATCH, `CRC field ${hex32(got)}, computed ${hex32(want)}`);
      }
    }
    if (this.markerFault) return this.reject(events, MpaErrorCode.MARKER_MISMATCH, this.markerFault);
    events.push({
      kind: 'fpdu',
      index: this.delivered++,
      startSeq: this.startSeq,
      ulpduLengthSeq: this.ulpduLengthSeq,
      ulpdu: this.ulpdu,
      wireLength: seqDiff(this.next, this.startSeq),
    });
    this.resetFpdu();
    return true;
  }

  /** A CRC or marker error: report and stop, or (silentDropOnCrcError) discard and rewind. */
  private reject(events: DeframeEvent[], code: MpaErrorCode, reason: string): boolean {
    if (!this.cfg.options.silentDropOnCrcError) {
      events.push(this.fail(code, reason));
      return false;
    }
    events.push({ kind: 'discard', index: this.delivered, startSeq: this.startSeq, code, reason });
    this.next = this.startSeq;
    this.resetFpdu();
    return false;
  }

  private fail(code: MpaErrorCode, reason: string): MpaStreamError {
    this.failed = {
      kind: 'error',
      index: this.delivered,
      startSeq: this.started ? this.startSeq : this.next,
      layer: LAYER_LLP,
      etype: ETYPE_MPA,
      code,
      reason,
    };
    return this.failed;
  }

  private resetFpdu(): void {
    this.phase = Phase.Length;
    this.started = false;
    this.lengthHave = 0;
    this.ulpduLength = 0;
    this.crcHave = 0;
    this.markerFault = null;
  }
}

