import { Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import type { Stream } from '../core/stream';
import { laneVector } from './rdmap-tx-resp-ulpdu';
import { laneShiftRight } from '../lib/lane-shift';
import { pipelineRegister } from '../lib/stage';
import { type FieldDef, record } from '../lib/record';
import { anyOf } from '../lib/onehot';

/**
 * The m_axis side shared by the transmit blocks (rdmap_tx_resp_w<W>, ddp_tx_w<W>): the registered
 * output beat, and the shift register that sends a small fixed-size ULPDU (Read Request, Atomic
 * Request / Response, Immediate Data, Terminate) one W-octet beat per cycle. Both are generator
 * functions that add their registers to the calling module, so the block stays one flat module.
 */

/** m_axis_tuser of the transmit blocks: octets of the ULPDU from this beat on. */
export const ULPDU_LEFT_BITS = 16;

/**
 * A beat offered to the output register: taken the cycle `emit` is high. Its octets are lanes
 * [phase, phase + W) of {hi, lo} (lo alone when `hi` is absent), with lanes [0, n) of `overlay`
 * over them where its mask is set (a segment's header over the realigned payload).
 */
export interface BeatSource {
  readonly emit: Expr;
  readonly lo: Expr;
  readonly hi?: Expr;
  /** log2(W) bits; 0 when absent. */
  readonly phase?: Expr;
  readonly overlay?: { readonly mask: Expr; readonly octets: Expr };
  readonly keep: Expr;
  readonly last: Expr;
  /** 16 bits: octets of the ULPDU from this beat on (ULPDU_Length on its first beat). */
  readonly left: Expr;
  /** A bit that travels with the beat (OutputRegister.flag). */
  readonly flag?: Expr;
  /** The source owns the output (a state bit; emit implies it): its fields are offered. */
  readonly owns: Expr;
}

/** tkeep of a beat with `left` octets of the ULPDU still to go (all ones when left >= W). */
export function keepFor(W: number, left: Expr): Expr {
  // Lanes past the largest `left` can say are never kept.
  return cat(...Array.from({ length: W }, (_, j) => (j >= 2 ** left.width - 1 ? lit(1, 0) : left.gt(lit(left.width, j)))).reverse());
}

export interface OutputRegister {
  /** The output stages take a beat this cycle (a register: no path from m_axis_tready). */
  readonly free: Expr;
  /** A beat is in the output stages. */
  readonly busy: Expr;
  /** The flag of the beat on m_axis (0 without opts.flag). */
  readonly flag: Expr;
  /** Outside sync(): the sources, at most one emitting per cycle. */
  connect(sources: readonly BeatSource[]): void;
}

/** Cycles from a source's emit to its beat on m_axis: the realign stage, then the output register. */
export const OUTPUT_STAGES = 2;

/**
 * The m_axis side in two registered stages: the beat as its source offers it (`beat_*`, the record
 * tx_beat: its window of {hi, lo} after the rotate's first step, the rest of the phase, the
 * overlay), then the realigned beat (`out_*`). The rest of the rotate (five LUT levels at W = 64
 * in yosys's mapping of a barrel) and the header overlay are a stage of their own, so no source's
 * decision logic sits in front of them, and the first stage is a skid buffer (verilog-axis REG_TYPE 2), so
 * m_axis_tready reaches no source: `free` is a register. One beat per cycle under no
 * back-pressure. tuser[15:0] is the beat's `left`, so on the first beat it is the ULPDU_Length
 * mpa_tx frames with. `overlayLanes`: the lanes a source may overlay (0..W); `flag`: the beats
 * carry a flag (sources without one give 0).
 */
export function outputRegister(m: ModuleBuilder, o: Stream, W: number, opts: { readonly overlayLanes: number; readonly flag: boolean }): OutputRegister {
  const lw = Math.log2(W);
  const n = opts.overlayLanes;
  // The rotate's first step (half a beat, the phase's top bit) is made on the way in, so the
  // stage holds W + W/2 − 1 lanes and the output register's rotate is one level shorter.
  const half = W / 2;
  const preLanes = W + half - 1;
  const fields: Record<string, FieldDef> = {
    window: { width: 8 * preLanes, doc: `{hi, lo} shifted down by ${half} lanes when the phase is ${half} or more` },
    phase: { width: lw - 1, doc: 'the phase mod W/2: the beat is lanes [phase, phase + W) of window' },
    ...(n ? { overlay_mask: n, overlay: { width: 8 * n, doc: 'header octets over the payload, lane j where the mask is set' } } : {}),
    keep: W,
    last: 1,
    left: ULPDU_LEFT_BITS,
    ...(opts.flag ? { flag: 1 } : {}),
  };
  const layout = record(`tx_beat_w${W}`, fields);
  const offer = { valid: m.wire('beat_in_valid', 1, { doc: 'a source emits a beat' }), data: m.wire('beat_in_data', layout.width) };
  const stage = pipelineRegister(m, 'beat', offer, { skid: true, doc: 'the beat as its source offers it' });
  const beat = layout.view(stage.out.data, { m, prefix: 'beat' });
  const outValid = m.reg('out_valid', 1, { reset: 0 });
  const outData = m.reg('out_data', 8 * W);
  const outKeep = m.reg('out_keep', W);
  const outLast = m.reg('out_last', 1);
  const outLeft = m.reg('out_left', ULPDU_LEFT_BITS, { doc: 'octets of the ULPDU from this beat on' });
  const outFlag = opts.flag ? m.reg('out_flag', 1) : null;
  const outFree = m.let('out_free', outValid.not().or(o.ready), { doc: 'the output register takes a beat this cycle' });
  m.assign(stage.out.ready, outFree);
  const rotated = laneShiftRight(m, 'beat_rotated', beat.window!, beat.phase!, 8, W);
  const lanes = Array.from({ length: W }, (_, j) => {
    const lane = rotated.slice(8 * j + 7, 8 * j);
    return j < n ? mux(beat.overlay_mask!.bit(j), beat.overlay!.slice(8 * j + 7, 8 * j), lane) : lane;
  });
  m.assign(o.data, outData);
  m.assign(o.keep!, outKeep);
  m.assign(o.valid, outValid);
  m.assign(o.last!, outLast);
  m.assign(o.user!, outLeft);
  const data = laneVector(lanes);
  const [keep, last, left] = [beat.keep!, beat.last!, beat.left!];
  const flag = outFlag ? beat.flag! : null;
  m.sync(() =>
    m.when(outFree, () => {
      m.set(outValid, stage.out.valid);
      m.set(outData, data);
      m.set(outKeep, keep);
      m.set(outLast, last);
      m.set(outLeft, left);
      if (outFlag) m.set(outFlag, flag!);
    }),
  );
  return {
    free: stage.ready,
    busy: stage.out.valid.or(outValid),
    flag: outFlag ?? lit(1, 0),
    connect(sources) {
      const pack = (s: BeatSource) => {
        if (s.overlay && s.overlay.mask.width !== n) throw new Error(`an overlay of ${s.overlay.mask.width} lanes on an output register of ${n}`);
        // {hi, lo} as 2W − 1 lanes (the phase never reaches hi's top lane), its first rotate step.
        const window = s.hi ? cat(s.hi.slice(8 * (W - 1) - 1, 0), s.lo) : s.lo.zext(8 * (2 * W - 1));
        const down = (by: number) => window.slice(8 * (by + preLanes) - 1, 8 * by);
        const values: Record<string, Expr> = {
          window: s.phase ? mux(s.phase.bit(lw - 1), down(half), down(0)) : down(0),
          phase: s.phase ? s.phase.slice(lw - 2, 0) : lit(lw - 1, 0),
          ...(n ? { overlay_mask: s.overlay?.mask ?? lit(n, 0), overlay: s.overlay?.octets ?? lit(8 * n, 0) } : {}),
          keep: s.keep,
          last: s.last,
          left: s.left,
          ...(opts.flag ? { flag: s.flag ?? lit(1, 0) } : {}),
        };
        return layout.pack(values);
      };
      // The data follows the source that owns the output (a state bit), not its emit: the
      // emit decides only the valid.
      const data = sources.slice(0, -1).reduceRight<Expr>((acc, s) => mux(s.owns, pack(s), acc), pack(sources[sources.length - 1]!));
      m.assign(offer.valid, anyOf(sources.map((s) => s.emit)));
      m.assign(offer.data, data);
    },
  };
}

export interface FixedUlpduShifter {
  /** The beat source for the output register. */
  readonly beat: BeatSource;
  /**
   * Inside sync(): start sending `octets` (wire order; those past `length` are don't-care).
   * `keep`: the lanes that hold an octet (keepOf(length)), when the caller has it registered.
   */
  load(octets: readonly Expr[], length: Expr, keep?: Expr): void;
  /** The shift register's lane mask for a ULPDU of `length` octets (load()'s `keep`). */
  keepOf(length: Expr): Expr;
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
  // Which lanes hold an octet, shifted with the data: tkeep and tlast without a compare.
  const sbKeep = m.reg('short_keep', sbOctets, { doc: 'lane i of short_buf holds an octet of the ULPDU' });
  const emit = m.let('short_emit', o.active.and(o.outFree));
  const last = m.let('short_last', sbOctets > W ? sbKeep.bit(W).not() : lit(1, 1), { doc: 'no octet after this beat' });
  return {
    beat: { emit, owns: o.active, lo: sb.slice(8 * W - 1, 0), keep: sbKeep.slice(W - 1, 0), last, left: sbLeft.zext(ULPDU_LEFT_BITS) },
    keepOf: (length) => keepFor(sbOctets, length),
    load(octets, length, keep) {
      if (octets.length > sbOctets) throw new RangeError(`a ${octets.length}-octet ULPDU does not fit the ${sbOctets}-octet shift register`);
      m.set(sb, laneVector([...octets, ...Array.from({ length: sbOctets - octets.length }, () => lit(8, 0))]));
      m.set(sbLeft, length);
      m.set(sbKeep, keep ?? keepFor(sbOctets, length));
    },
    sync(onLast) {
      m.when(emit, () => {
        m.set(sb, cat(lit(8 * W, 0), sb.slice(8 * sbOctets - 1, 8 * W)));
        m.set(sbLeft, sbLeft.sub(W));
        m.set(sbKeep, cat(lit(W, 0), sbKeep.slice(sbOctets - 1, W)));
        m.when(last, onLast);
      });
    },
  };
}
