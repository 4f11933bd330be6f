import { Expr, cat, lit } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import type { Stream } from '../core/stream';
import { laneVector } from './rdmap-tx-resp-ulpdu';

/**
 * The m_axis side shared by the transmit blocks (rdmap_tx_resp_w<W>, ddp_tx_w<W>): the registered
 * output beat, and the shift register that sends a small fixed-size ULPDU (Read Request, Atomic
 * Request / Response, Immediate Data, Terminate) one W-octet beat per cycle. Both are generator
 * functions that add their registers to the calling module, so the block stays one flat module.
 */

/** m_axis_tuser of the transmit blocks: octets of the ULPDU from this beat on. */
export const ULPDU_LEFT_BITS = 16;

/** A beat offered to the output register: taken the cycle `emit` is high. */
export interface BeatSource {
  readonly emit: Expr;
  readonly data: Expr;
  readonly keep: Expr;
  readonly last: Expr;
  /** 16 bits: octets of the ULPDU from this beat on (ULPDU_Length on its first beat). */
  readonly left: Expr;
}

/** tkeep of a beat with `left` octets of the ULPDU still to go (all ones when left >= W). */
export function keepFor(W: number, left: Expr): Expr {
  return cat(...Array.from({ length: W }, (_, j) => left.gt(lit(left.width, j))).reverse());
}

export interface OutputRegister {
  /** The output register takes a beat this cycle (empty, or its beat is being taken). */
  readonly free: Signal;
  /** A beat is waiting in the register. */
  readonly valid: Signal;
  /** Inside sync(): load the beat of whichever source emits (at most one per cycle). */
  sync(sources: readonly BeatSource[]): void;
}

/**
 * The registered m_axis beat (out_valid / out_data / out_keep / out_last / out_left). tready
 * reaches `free` combinationally: no skid buffer, one beat per cycle under no back-pressure.
 * tuser[15:0] is the beat's `left`, so on the first beat it is the ULPDU_Length mpa_tx frames with.
 */
export function outputRegister(m: ModuleBuilder, o: Stream, W: number): OutputRegister {
  const outValid = m.reg('out_valid', 1, { reset: 0 });
  const outData = m.reg('out_data', 8 * W);
  const outKeep = m.reg('out_keep', W);
  const outLast = m.reg('out_last', 1);
  const outLeft = m.reg('out_left', ULPDU_LEFT_BITS, { doc: 'octets of the ULPDU from this beat on' });
  const free = m.let('out_free', outValid.not().or(o.ready), { doc: 'the output register takes a beat this cycle' });
  m.assign(o.data, outData);
  m.assign(o.keep!, outKeep);
  m.assign(o.valid, outValid);
  m.assign(o.last!, outLast);
  m.assign(o.user!, outLeft);
  return {
    free,
    valid: outValid,
    sync(sources) {
      m.when(free, () => m.set(outValid, 0));
      for (const s of sources) {
        m.when(s.emit, () => {
          m.set(outValid, 1);
          m.set(outData, s.data);
          m.set(outKeep, s.keep);
          m.set(outLast, s.last);
          m.set(outLeft, s.left);
        });
      }
    },
  };
}

export interface FixedUlpduShifter {
  /** The beat source for the output register. */
  readonly beat: BeatSource;
  /** Inside sync(): start sending `octets` (wire order; those past `length` are don't-care). */
  load(octets: readonly Expr[], length: Expr): void;
  /** Inside sync(): shift out a beat when it is taken; `onLast` runs with the last beat. */
  sync(onLast: () => void): void;
}

/**
 * A shift register of whole beats holding one ULPDU of at most `maxOctets` octets, lane 0 first
 * (short_buf / short_left, 7 bits: at most 127 octets). It sends while `active` and the output
 * register is free.
 */
export function fixedUlpduShifter(m: ModuleBuilder, o: { W: number; maxOctets: number; active: Expr; outFree: Expr }): FixedUlpduShifter {
  const { W } = o;
  if (o.maxOctets > 127) throw new RangeError(`fixed ULPDUs are at most 127 octets, got ${o.maxOctets}`);
  const sbOctets = Math.ceil(o.maxOctets / W) * W;
  const sb = m.reg('short_buf', 8 * sbOctets, { doc: 'the ULPDU still to send, lane 0 first' });
  const sbLeft = m.reg('short_left', 7, { doc: 'its octets' });
  const emit = m.let('short_emit', o.active.and(o.outFree));
  const last = m.let('short_last', sbLeft.le(W));
  return {
    beat: { emit, data: sb.slice(8 * W - 1, 0), keep: keepFor(W, sbLeft), last, left: sbLeft.zext(ULPDU_LEFT_BITS) },
    load(octets, length) {
      if (octets.length > sbOctets) throw new RangeError(`a ${octets.length}-octet ULPDU does not fit the ${sbOctets}-octet shift register`);
      m.set(sb, laneVector([...octets, ...Array.from({ length: sbOctets - octets.length }, () => lit(8, 0))]));
      m.set(sbLeft, length);
    },
    sync(onLast) {
      m.when(emit, () => {
        m.set(sb, cat(lit(8 * W, 0), sb.slice(8 * sbOctets - 1, 8 * W)));
        m.set(sbLeft, sbLeft.sub(W));
        m.when(last, onLast);
      });
    },
  };
}
