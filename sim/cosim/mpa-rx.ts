import { fpduCycles } from '../../ts-model/cost/cost-model';
import { cycleCheck, type CycleCheck } from './cycle-check';
import { MpaDeframer } from '../../ts-model/mpa/deframer';
import { corruptCrc, corruptMarker } from '../../ts-model/mpa/faults';
import { MpaFramer } from '../../ts-model/mpa/framer';
import { mulpdu } from '../../ts-model/mpa/mulpdu';
import { mpaOptions } from '../../ts-model/mpa/options';
import { MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSink, AxisSource } from '../cocotb/axis';
import type { RecordGroup } from '../cocotb/record-group';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { SEQ_LOW_BITS } from './qp-config';

/**
 * Co-simulation of the generated MPA receive block (mpa_rx_w<W>) against the model's MpaDeframer.
 * Random streams framed by MpaFramer (random S0, also just below 2^32, random start position,
 * markers and CRC on or off, ULPDUs of 0..MULPDU(1460) octets and some up to 4096), cut into TCP
 * segments of random sizes, fed with random back-pressure on both sides; the ULPDUs coming out
 * are compared FPDU by FPDU with the model's, and with faults injected (a CRC bit, an FPDUPTR with
 * the CRC recomputed, a ULPDU_Length over cfg_max_ulpdu) the first failed FPDU's index and the
 * error code must be the model's, with nothing output after it. Deterministic from the seed.
 */
export interface MpaRxCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  /** FPDUs to frame in total, over as many streams as it takes (each stream resets the DUT). */
  readonly fpdus: number;
  /** Probability per FPDU that a fault is injected into it (default 0). */
  readonly faults?: number;
  /** Probability that the source pauses / the sink is not ready in a cycle (default: random per stream, 0..0.5). */
  readonly sourcePause?: number;
  readonly sinkPause?: number;
  /** ULPDU size mix: 'mixed' (default) or 'large' (MULPDU-sized, for throughput). */
  readonly sizes?: 'mixed' | 'large';
  /**
   * TCP segment size mix: 'mixed' (default), 'full' (1460 octets), or 'fpdu': one FPDU per
   * segment, as an MPA-aware sender sends them (spec/mpa.md §5) and as the cost model assumes.
   */
  readonly segments?: 'mixed' | 'full' | 'fpdu';
}

export type FaultKind = 'crc' | 'marker' | 'oversize';

export interface MpaRxMismatch {
  readonly stream: number;
  /** The FPDU index in the stream the first difference is at. */
  readonly fpdu: number;
  /**
   * The cycle of the difference: when the differing packet's last beat came out or err_valid rose;
   * for something the RTL never did, the cycle it was found missing by.
   */
  readonly cycle: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
  readonly config: StreamConfig;
}

export interface StreamConfig {
  readonly markers: boolean;
  readonly crc: boolean;
  readonly s0: number;
  readonly seq: number;
  readonly maxUlpdu: number;
  readonly sizes: readonly number[];
  readonly fault: { readonly at: number; readonly kind: FaultKind } | null;
}

export interface MpaRxCosimResult {
  readonly dut: 'mpa_rx';
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly streams: number;
  /** FPDUs framed and fed. */
  readonly fpdus: number;
  /** FPDUs the model delivered (and the RTL had to output good). */
  readonly delivered: number;
  /** Streams whose first error (index and code) was compared with the model's. */
  readonly errorsChecked: number;
  /** First errors compared, by code and injected fault ('0x02 crc', '0x03 marker', '0x03 oversize'). */
  readonly errorCodes: Readonly<Record<string, number>>;
  readonly coverage: MpaRxCoverage;
  readonly mismatches: number;
  readonly payloadBytes: number;
  readonly inputBeats: number;
  readonly outputBeats: number;
  readonly cycles: number;
  /** Cycles from each stream's start to its last packet (no reset, no idle tail). */
  readonly busyCycles: number;
  /** Input beats accepted per busy cycle. */
  readonly inputBeatsPerCycle: number;
  readonly simCyclesPerSecond: number;
  readonly buildSeconds: number;
  readonly buildCached: boolean;
  readonly rtl: string;
  /** Input cycles per delivered FPDU against the cost model; only with segments 'fpdu' and no back-pressure. */
  readonly cycleCheck: CycleCheck | null;
  readonly firstMismatch?: MpaRxMismatch;
}

const EMSS = 1460;
const LARGE_ULPDU = 4096;

function ulpduSize(r: Prng, W: number, max: number, mix: 'mixed' | 'large'): number {
  if (mix === 'large') return r.int(max - 64, max);
  const x = r.u32() / 0x100000000;
  if (x < 0.3) return r.int(0, 16); // several FPDUs per beat
  if (x < 0.45) return Math.max(0, Math.min(max, r.int(1, 8) * W + r.int(-3, 3))); // beat-boundary edges
  if (x < 0.9) return r.int(0, max);
  return r.int(max, LARGE_ULPDU);
}

function segmentSize(r: Prng, W: number, mix: 'mixed' | 'full'): number {
  if (mix === 'full') return EMSS;
  const x = r.u32() / 0x100000000;
  if (x < 0.3) return r.int(1, W + 3);
  if (x < 0.6) return r.int(1, 4 * W);
  return r.int(1, EMSS);
}

/**
 * A planned stream cut into TCP segments: 'fpdu' at the delivered FPDUs' edges (`delivered`, the
 * model deframer's FPDUs), whatever follows them (a faulty FPDU and the rest) in one last segment;
 * otherwise of segmentSize's sizes.
 */
export function segmentStream(r: Prng, W: number, plan: PlannedStream, mix: 'mixed' | 'full' | 'fpdu', delivered: readonly { readonly startSeq: number; readonly wireLength: number }[]): Uint8Array[] {
  const segs: Uint8Array[] = [];
  let at = 0;
  if (mix === 'fpdu') {
    for (const g of delivered) segs.push(plan.wire.subarray(at, (at = ((g.startSeq - plan.cfg.seq) >>> 0) + g.wireLength)));
    if (at < plan.wire.length) segs.push(plan.wire.subarray(at));
    return segs;
  }
  while (at < plan.wire.length) segs.push(plan.wire.subarray(at, (at += Math.min(plan.wire.length - at, segmentSize(r, W, mix)))));
  return segs;
}

/** Corner cases of spec/mpa.md §4.5 met by the framed FPDUs (so a test can insist on them). */
export interface MpaRxCoverage {
  /** Case (a): an FPDU starting with its leading marker. */
  leadingMarker: number;
  /** Case (b): a marker right after the ULPDU_Length word. */
  markerAfterHeader: number;
  /** Case (d): a marker between PAD and CRC. */
  markerBeforeCrc: number;
  zeroLength: number;
}

export interface PlannedStream {
  readonly cfg: StreamConfig;
  readonly wire: Uint8Array;
  readonly ulpdus: readonly Uint8Array[];
  readonly coverage: MpaRxCoverage;
}

const WORD = 4;

export function planStream(r: Prng, W: number, n: number, faultRate: number, mix: 'mixed' | 'large'): PlannedStream {
  const markers = r.bool(0.6);
  const crc = r.bool(0.75);
  const s0 = r.bool(0.3) ? (0xffffffff - r.int(0, 4000)) >>> 0 : r.u32();
  const seq = r.bool(0.3) ? s0 : (s0 + 4 * r.int(1, 4000)) >>> 0;
  const max = mulpdu(EMSS, markers);
  const sizes = Array.from({ length: n }, () => ulpduSize(r, W, max, mix));
  let fault: StreamConfig['fault'] = null;
  let maxUlpdu = MAX_ULPDU_LENGTH;
  for (let i = 0; i < n && !fault; i++) {
    if (!r.bool(faultRate)) continue;
    const kinds: FaultKind[] = ['oversize', ...(crc ? (['crc'] as const) : []), ...(markers ? (['marker'] as const) : [])];
    const kind = r.pick(kinds);
    fault = { at: i, kind };
    if (kind === 'oversize') {
      // The maximum lets every earlier ULPDU through and is exceeded by this one.
      maxUlpdu = Math.max(0, ...sizes.slice(0, i));
      if (sizes[i]! <= maxUlpdu) sizes[i] = Math.min(MAX_ULPDU_LENGTH, maxUlpdu + r.int(1, 300));
    }
  }
  const framer = new MpaFramer({ s0, markers, crc, seq });
  const parts: Uint8Array[] = [];
  const ulpdus: Uint8Array[] = [];
  let actualFault = fault;
  const coverage: MpaRxCoverage = { leadingMarker: 0, markerAfterHeader: 0, markerBeforeCrc: 0, zeroLength: 0 };
  sizes.forEach((size, i) => {
    const ulpdu = r.bytes(size);
    const f = framer.frame(ulpdu);
    const lead = f.markers.some((mk) => mk.leading) ? WORD : 0;
    if (lead) coverage.leadingMarker++;
    if (f.markers.some((mk) => !mk.leading && mk.wireOffset === lead + WORD)) coverage.markerAfterHeader++;
    if (f.markers.some((mk) => mk.wireOffset + WORD === f.crcOffset)) coverage.markerBeforeCrc++;
    if (size === 0) coverage.zeroLength++;
    let wire = f.wire;
    if (fault && fault.at === i && fault.kind === 'crc') wire = corruptCrc(f);
    if (fault && fault.at === i && fault.kind === 'marker') {
      if (f.markers.length) wire = corruptMarker(f, crc, r.int(0, f.markers.length - 1));
      else actualFault = null; // no marker in this FPDU's span: the stream runs clean
    }
    ulpdus.push(ulpdu);
    parts.push(wire);
  });
  const total = parts.reduce((a, p) => a + p.length, 0);
  const wire = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    wire.set(p, at);
    at += p.length;
  }
  return { cfg: { markers, crc, s0, seq, maxUlpdu, sizes, fault: actualFault }, wire, ulpdus, coverage };
}

export const preview = (b: Uint8Array) => `${b.length} octets ${Buffer.from(b.subarray(0, 24)).toString('hex')}${b.length > 24 ? '…' : ''}`;

/**
 * The fixture of mpa_rx_w<W>: TCP payload into s_axis, ULPDUs out of m_axis, the stream's
 * configuration on cfg_*; input beats and input tlasts counted, and the cycle err_valid rose.
 */
class MpaRxBench extends DutBench {
  readonly sAxis: AxisSource;
  readonly mAxis: AxisSink;
  readonly cfg: RecordGroup;
  inputBeats = 0;
  /** Cycle of each input tlast of the current stream. */
  lastAt: number[] = [];
  /** The cycle err_valid was first seen in the current stream (-1: not yet). */
  errAt = -1;

  constructor(opts: MpaRxCosimOptions) {
    super(...DutBench.opening(`mpa_rx_w${opts.width}`, opts.seed, dutSelection(opts)));
    const { model } = this;
    this.sAxis = this.source('s_axis');
    this.mAxis = this.sink('m_axis');
    this.cfg = this.inputs('cfg');
    const h = (n: string) => model.handle(n);
    const [sTvalid, sTready, sTlast, errValid] = [h('s_axis_tvalid'), h('s_axis_tready'), h('s_axis_tlast'), h('err_valid')];
    this.add({
      sample: () => {
        if (this.errAt < 0 && model.peekPreNumber(errValid)) this.errAt = model.cycles;
        if (!model.peekPreNumber(sTvalid) || !model.peekPreNumber(sTready)) return;
        this.inputBeats++;
        // The cycles the block spends taking in each FPDU (input tlast to input tlast, one FPDU per
        // segment): what the cost model's MPA RX stage estimates. Any stall of the input shows here.
        if (model.peekPreNumber(sTlast)) this.lastAt.push(model.cycles);
      },
    });
  }

  /** A new stream: its back-pressure (probabilities from the bench's stream unless given), configuration and a reset. */
  start(cfg: StreamConfig, sourcePause: number | undefined, sinkPause: number | undefined): void {
    const r = this.r;
    this.sAxis.setPause(this.pause(() => sourcePause ?? (r.bool(0.2) ? 0 : r.int(0, 50) / 100)));
    this.mAxis.setPause(this.pause(() => sinkPause ?? (r.bool(0.2) ? 0 : r.int(0, 50) / 100)));
    this.cfg.poke({ markers: cfg.markers, crc: cfg.crc, s0: cfg.s0 & SEQ_LOW_BITS, seq: cfg.seq & SEQ_LOW_BITS, maxUlpdu: cfg.maxUlpdu });
    this.reset();
    this.lastAt = [];
    this.errAt = -1;
  }
}

export function cosimMpaRx(opts: MpaRxCosimOptions): MpaRxCosimResult {
  const W = opts.width;
  const tb = new MpaRxBench(opts);
  const { model, r, sAxis: source, mAxis: sink } = tb;
  const h = (n: string) => model.handle(n);
  const errValid = h('err_valid');
  const errCode = h('err_code');
  const fpduCount = h('fpdu_count');
  const mTvalid = h('m_axis_tvalid');
  const measuring = opts.sourcePause === 0 && opts.sinkPause === 0 && opts.segments === 'fpdu';
  const cyclePairs: { measured: number; model: number }[] = [];

  let streams = 0;
  let framed = 0;
  let delivered = 0;
  let errorsChecked = 0;
  let payloadBytes = 0;
  const mismatches = new Tally<MpaRxMismatch>(1);
  let cycles = 0;
  let busyCycles = 0;
  const errorCodes: Record<string, number> = {};
  const coverage: MpaRxCoverage = { leadingMarker: 0, markerAfterHeader: 0, markerBeforeCrc: 0, zeroLength: 0 };
  const t0 = performance.now();

  while (framed < opts.fpdus) {
    const n = Math.min(opts.fpdus - framed, r.bool(0.2) ? r.int(1, 4) : r.int(5, 60));
    const plan = planStream(r, W, n, opts.faults ?? 0, opts.sizes ?? 'mixed');
    const { cfg } = plan;
    const stream = streams++;
    framed += n;
    payloadBytes += plan.wire.length;
    for (const k of Object.keys(coverage) as (keyof MpaRxCoverage)[]) coverage[k] += plan.coverage[k];

    const deframer = new MpaDeframer({ s0: cfg.s0, markers: cfg.markers, crc: cfg.crc, seq: cfg.seq, options: mpaOptions({ maxUlpduLength: cfg.maxUlpdu }) });
    const events = deframer.push(plan.wire);
    const good = events.filter((e) => e.kind === 'fpdu');
    const error = deframer.error;

    tb.start(cfg, opts.sourcePause, opts.sinkPause);
    for (const seg of segmentStream(r, W, plan, opts.segments ?? 'mixed', good)) source.send(seg);
    const expectedFrames = good.length + (error ? 1 : 0);
    const c0 = model.cycles;
    const limit = Math.ceil(plan.wire.length / W) * 8 + plan.cfg.sizes.length * 16 + 2000;
    let timedOut = true;
    for (let i = 0; i < limit; i++) {
      // Done when every expected packet is out, or the RTL stopped on an error (expected or not).
      if (source.idle && (sink.available >= expectedFrames || (model.peekNumber(errValid) === 1 && model.peekNumber(mTvalid) === 0))) {
        timedOut = false;
        break;
      }
      tb.cycle();
    }
    busyCycles += model.cycles - c0;
    // Anything output after the expected packets is a fault too: give it time to show.
    if (!timedOut) tb.run(4 * W + 64);
    cycles += model.cycles - c0;
    if (measuring) {
      // Delivered FPDUs after the first (which includes the fill), before any error.
      const { lastAt } = tb;
      for (let i = 1; i < Math.min(lastAt.length, good.length); i++) {
        const g = good[i]!;
        cyclePairs.push({ measured: lastAt[i]! - lastAt[i - 1]!, model: fpduCycles(W, { wireLength: g.wireLength, ulpduLength: g.ulpdu.length, placements: [] }).mpaRx });
      }
    }
    const frames = sink.drain();

    // One difference per stream: after the first, the rest of the stream means little.
    let ok = true;
    const now = model.cycles;
    const check = (cond: boolean, fpdu: number, what: string, expected: string, actual: string, cycle = now) => {
      if (!cond && ok) {
        ok = false;
        mismatches.add({ stream, fpdu, cycle, what, expected, actual, config: cfg });
      }
    };
    good.forEach((e, i) => {
      const f = frames[i];
      check(f !== undefined, i, 'packet missing', `ULPDU ${preview(e.ulpdu)}`, timedOut ? `nothing (timed out, ${sink.receivedCount} packets in all)` : 'nothing');
      if (!f) return;
      check(Number(f.tuser) === 1, i, 'tuser', '1 (good FPDU)', String(f.tuser), f.cycle);
      check(Buffer.from(f.data).equals(Buffer.from(e.ulpdu)), i, 'ULPDU', preview(e.ulpdu), preview(f.data), f.cycle);
    });
    if (error) {
      const i = error.index;
      const f = frames[i];
      check(f !== undefined, i, 'failed packet missing', `tuser 0, code ${error.code}`, 'nothing');
      if (f) {
        check(Number(f.tuser) === 0, i, 'tuser of the failed FPDU', '0', String(f.tuser), f.cycle);
        // ULPDU_Length over the maximum: one zero-length beat; otherwise the ULPDU went out cut-through.
        const want = cfg.sizes[i]! > cfg.maxUlpdu ? new Uint8Array(0) : plan.ulpdus[i]!;
        check(Buffer.from(f.data).equals(Buffer.from(want)), i, 'octets of the failed FPDU', preview(want), preview(f.data), f.cycle);
      }
      check(model.peekNumber(errValid) === 1, i, 'err_valid', '1', String(model.peekNumber(errValid)));
      check(model.peekNumber(errCode) === error.code, i, 'err_code', String(error.code), String(model.peekNumber(errCode)), tb.errAt);
      errorsChecked++;
      const key = `0x0${error.code} ${cfg.fault && cfg.fault.at === i ? cfg.fault.kind : 'other'}`;
      errorCodes[key] = (errorCodes[key] ?? 0) + 1;
    } else {
      check(model.peekNumber(errValid) === 0, good.length, 'err_valid', '0', `1 (code ${model.peekNumber(errCode)})`, tb.errAt);
    }
    check(frames.length <= expectedFrames, expectedFrames, 'packets after the last expected one', String(expectedFrames), String(frames.length), frames[expectedFrames]?.cycle);
    check((model.peekNumber(fpduCount) >>> 0) === good.length, good.length, 'fpdu_count', String(good.length), String(model.peekNumber(fpduCount)));
    delivered += good.length;
    if (timedOut) {
      // The source may still hold beats of this stream: later streams would be meaningless.
      check(false, frames.length, 'stream did not drain', `${expectedFrames} packets, input all accepted`, `${frames.length} packets, source ${source.idle ? 'idle' : 'busy'}`);
      break;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  tb.close();
  return {
    dut: 'mpa_rx',
    module: tb.src!.top,
    width: W,
    seed: opts.seed,
    streams,
    fpdus: framed,
    delivered,
    errorsChecked,
    errorCodes,
    coverage,
    mismatches: mismatches.count,
    payloadBytes,
    inputBeats: tb.inputBeats,
    outputBeats: sink.beatCount,
    cycles,
    busyCycles,
    inputBeatsPerCycle: Math.round((tb.inputBeats / busyCycles) * 1000) / 1000,
    cycleCheck: measuring ? cycleCheck(cyclePairs) : null,
    simCyclesPerSecond: Math.round(cycles / seconds),
    buildSeconds: tb.compiled!.buildMs / 1000,
    buildCached: tb.compiled!.cached,
    rtl: tb.origin,
    ...(mismatches.first && { firstMismatch: mismatches.first }),
  };
}
