import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { MPA_RX_VERDICT } from '../../hdl-gen/blocks/mpa-rx';
import { REASM_PAGE_BEATS, REASM_POOL_BYTES, ulpduReasmModule, ulpduReasmName } from '../../hdl-gen/blocks/ulpdu-reasm';
import { withDescendants } from '../../hdl-gen/core/hierarchy';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { REGENERATE, portsOf } from '../../hdl-gen/gen/generate';
import { cacheDir } from '../../hdl-gen/gen/paths';
import type { Prng } from '../../ts-model/util/prng';
import type { MonitoredBeat } from '../cocotb/axis-monitor';
import type { AxisSendBeat } from '../cocotb/axis-source';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';

/**
 * Co-simulation of ulpdu_reasm_w<W>_q<N> (hdl-gen/blocks/ulpdu-reasm.ts), the reassembly behind
 * the shared mpa_rx. Each QP with traffic gets a stream of random ULPDUs (one beat, exact page
 * multiples, many pages, anything up to its share of the pool; passed, or failed with an LLP
 * code), as mpa_rx would put them out: full beats but the last (tkeep 2^k-1), the verdict in tuser
 * on tlast only (other beats carry noise there, and lanes beyond tkeep too). Each QP's beats are
 * cut into "segments" (runs of beats that may end mid-ULPDU, as TCP segments cut FPDUs) and the
 * QPs' segments interleaved as asked ('same', 'alternate', 'rotate', 'random', as in
 * mpa-rx-shared.ts).
 *
 * With `abandon`, some ULPDUs stop part way (the stream ends mid-ULPDU) and their QP is restarted
 * on cfg (a new connection): the partial ULPDU must never appear, the QP's next ULPDUs must.
 *
 * The run ends by running the pool dry: with everything before out and m_axis held, one QP sends a
 * ULPDU of one page, one of one beat, then one of the whole pool, whose beats take every page left
 * until the input stops. m_axis let go, the reader gives the two pages back in consecutive cycles
 * while the free list is empty (its one stored page loaded into its head in the cycle the next is
 * pushed), and the writer needs both.
 *
 * m_axis is checked beat by beat against the ULPDUs in the order their last beats went in: every
 * ULPDU whole (no other QP's beat inside), octet for octet, tkeep all ones but the last beat's,
 * tlast on the last beat only, tid its QP and tuser its verdict on every beat. A run that stops
 * (the writer waiting for a page that never comes back: a leak) is a mismatch, found by a cycle
 * bound. `idle` (no complete ULPDU held) is checked every cycle: once it reads 1, m_axis_tvalid
 * stays 0 for IDLE_LEAD cycles (a ULPDU written since takes that long to come out), and it is 0
 * whenever m_axis_tvalid is 1. Deterministic from the seed.
 */
export type Interleave = 'same' | 'alternate' | 'rotate' | 'random';

export interface UlpduReasmOptions extends DutSelection {
  readonly width: number;
  readonly qps: number;
  readonly seed: number;
  /** ULPDUs per QP with traffic (those abandoned included). */
  readonly ulpdus: number;
  readonly interleave: Interleave;
  /** Back-pressure on both sides (default: random per run, 0..0.5); 0 for exact cycle counts. */
  readonly pause?: number;
  /** Back-pressure on m_axis alone, overriding `pause` there. */
  readonly sinkPause?: number;
  /** Pool octets (default the block's, REASM_POOL_BYTES); another size builds that variant. */
  readonly poolBytes?: number;
  /** QPs with traffic (default all, at most 8; 'alternate' 2); beyond QP 0 drawn at random, the last QP always among them. */
  readonly streams?: number;
  /** Probability per ULPDU that its QP's stream stops part way and the QP is restarted on cfg (default 0). */
  readonly abandon?: number;
  /**
   * When cfg follows a stopped stream: 'written' (default) once the partial ULPDU's beats have had
   * their pages and 8 cycles to be written; 'accepted' as soon as its last beat is taken on s_axis
   * (a probe: the contract does not say how cfg orders with beats still in the input register).
   */
  readonly cfgAt?: 'written' | 'accepted';
}

export interface UlpduReasmMismatch {
  /** Index in the expected output order (-1: not about one ULPDU). */
  readonly ulpdu: number;
  readonly qp: number;
  /** The ULPDU's index among its QP's delivered ones. */
  readonly ofQp: number;
  readonly beat: number;
  readonly cycle: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
}

export interface UlpduReasmResult {
  readonly module: string;
  readonly seed: number;
  /** The QPs given traffic. */
  readonly streamQps: readonly number[];
  readonly poolBytes: number;
  readonly pages: number;
  readonly pause: number;
  readonly sinkPause: number;
  readonly segments: number;
  /** Segments whose QP differs from the one before. */
  readonly switches: number;
  /** Whole ULPDUs expected out (= those sent complete). */
  readonly ulpdus: number;
  readonly delivered: number;
  /** Partial ULPDUs dropped by a cfg. */
  readonly drops: number;
  /** cfgs with nothing open on the QP. */
  readonly restarts: number;
  /** Octets sent, partial ULPDUs included. */
  readonly totalBytes: number;
  /** The most QPs with a ULPDU open (partly in) at once, between segments. */
  readonly peakOpen: number;
  readonly inputBeats: number;
  readonly outputBeats: number;
  /** Cycles from the end of the init sweep to the last output beat. */
  readonly cycles: number;
  /** Input beat changes of QP, plus one for the first beat (the writer loads its context too). */
  readonly inputSwitches: number;
  /** Cycles between the first and last input beat in which no beat was taken (this and the rates below: before the pool is run dry). */
  readonly inputStalls: number;
  /** Cycles inside an output ULPDU (first to last beat) with no beat. */
  readonly outputGapsWithin: number;
  /** Cycles between output ULPDUs with no beat while the next was long complete (its last beat in ≥ 8 cycles before). */
  readonly outputGapsBetween: number;
  /** Least cycles from a ULPDU's last input beat to its first output beat. */
  readonly minLatency: number;
  readonly mismatches: number;
  readonly firstMismatch?: UlpduReasmMismatch;
}

/** A ULPDU sent whole: what must come out. */
interface Expected {
  readonly qp: number;
  readonly ofQp: number;
  readonly data: Uint8Array;
  readonly verdict: number;
  /** Index of its last beat in the input order. */
  readonly lastIn: number;
}

type Step =
  | { readonly kind: 'segment'; readonly qp: number; readonly beats: readonly AxisSendBeat[] }
  | { readonly kind: 'cfg'; readonly qp: number; readonly before: number; readonly openPages: number }
  /** The pool run dry: `beats` sent with m_axis held once the `before` ULPDUs are out; m_axis let go once `stallAt` of them are in. */
  | { readonly kind: 'exhaust'; readonly qp: number; readonly beats: readonly AxisSendBeat[]; readonly before: number; readonly stallAt: number };

interface Plan {
  readonly steps: readonly Step[];
  readonly expected: readonly Expected[];
  /** Pages held by each ULPDU (whole or dropped) in the order their descriptors are queued; drops as -pages. */
  readonly queued: readonly number[];
  readonly segments: number;
  readonly switches: number;
  readonly drops: number;
  readonly restarts: number;
  readonly totalBytes: number;
  readonly peakOpen: number;
  /** Input beats and whole ULPDUs before the pool is run dry (the rates count these). */
  readonly mainBeats: number;
  readonly mainUlpdus: number;
}

const PASSED = Number(MPA_RX_VERDICT.encode({ passed: 1, llp_err: 0 }));
const VERDICT_MASK = (1 << MPA_RX_VERDICT.width) - 1;
/** Cycles from a ULPDU's write into the pool to its first beat on m_axis (descriptor FIFO 2, read 1, output register 1, skid 1): none leaves sooner after `idle` reads 1. */
const IDLE_LEAD = 5;

/** QPs with traffic: QP 0, the last QP (the top of tid's range), the rest drawn at random. */
function streamQps(r: Prng, qps: number, n: number): number[] {
  const ids = new Set<number>([0, qps - 1].slice(0, n));
  while (ids.size < n) ids.add(r.int(0, qps - 1));
  return [...ids].sort((a, b) => a - b);
}

/** A ULPDU size up to `maxBytes`: one beat, page multiples, many pages, anything. */
function ulpduSize(r: Prng, W: number, pageBytes: number, maxBytes: number): number {
  const k = r.int(0, 9);
  if (k <= 1) return r.int(1, W);
  if (k === 2) return r.int(1, maxBytes / pageBytes) * pageBytes;
  if (k === 3) return r.int(1, maxBytes / W) * W;
  if (k <= 5 && maxBytes > pageBytes) return r.int(pageBytes + 1, maxBytes);
  return r.int(1, maxBytes);
}

/** The beats of `data` as mpa_rx gives them; `upTo` beats only for a partial ULPDU (no tlast). */
function beatsOf(r: Prng, W: number, qp: number, data: Uint8Array, verdict: number, upTo?: number): AxisSendBeat[] {
  const n = Math.ceil(data.length / W);
  const out: AxisSendBeat[] = [];
  for (let i = 0; i < (upTo ?? n); i++) {
    const last = i === n - 1;
    const lanes = r.bytes(W); // noise beyond tkeep
    const octets = data.subarray(i * W, Math.min(data.length, (i + 1) * W));
    lanes.set(octets);
    // tuser is meaningful on tlast only: noise elsewhere, so a verdict taken from another beat shows.
    out.push({ data: lanes, tkeep: (1n << BigInt(octets.length)) - 1n, tlast: last, tuser: last ? verdict : r.int(0, VERDICT_MASK), tid: qp });
  }
  return out;
}

function plan(r: Prng, W: number, pages: number, qps: readonly number[], opts: UlpduReasmOptions): Plan {
  const pageBytes = REASM_PAGE_BEATS * W;
  // The contract: the pool holds every QP's open ULPDU at once. Each QP's ULPDUs stay within its share.
  const share = Math.floor(pages / qps.length);
  if (share < 1) throw new RangeError(`ulpdu_reasm: ${qps.length} QPs with traffic cannot each have a page of ${pages}`);
  const maxBytes = share * pageBytes;
  const abandon = opts.abandon ?? 0;
  // Per QP: its beats, where its stream stops mid-ULPDU (a cfg follows), its whole ULPDUs.
  const streams = qps.map((qp) => {
    const beats: { beat: AxisSendBeat; lastOf?: { data: Uint8Array; verdict: number }; stop?: boolean }[] = [];
    for (let u = 0; u < opts.ulpdus; u++) {
      let data = r.bytes(ulpduSize(r, W, pageBytes, maxBytes));
      const verdict = r.bool(0.75) ? PASSED : Number(MPA_RX_VERDICT.encode({ passed: 0, llp_err: r.int(1, 255) }));
      if (r.bool(abandon)) {
        if (data.length <= W) data = r.bytes(r.int(W + 1, Math.min(maxBytes, 2 * W)));
        const n = Math.ceil(data.length / W);
        // Some stop at a page's end: the context then names no page for a next beat.
        const atPage = Math.floor((n - 1) / REASM_PAGE_BEATS) * REASM_PAGE_BEATS;
        const part = beatsOf(r, W, qp, data, verdict, atPage > 0 && r.bool(0.3) ? atPage : r.int(1, n - 1));
        part.forEach((beat, i) => beats.push({ beat, ...(i === part.length - 1 && { stop: true }) }));
        continue;
      }
      const whole = beatsOf(r, W, qp, data, verdict);
      // Now and then a new connection between ULPDUs too: cfg with nothing open drops nothing.
      const restart = r.bool(abandon / 2);
      whole.forEach((beat, i) => beats.push({ beat, ...(i === whole.length - 1 && { lastOf: { data, verdict }, ...(restart && { stop: true }) }) }));
    }
    return beats;
  });
  // Segments: short or long runs of beats, ending where the stream stops mid-ULPDU.
  const maxBeats = maxBytes / W;
  const cut = streams.map((beats) => {
    const segs: { from: number; to: number; stop: boolean }[] = [];
    for (let pos = 0; pos < beats.length; ) {
      let to = Math.min(beats.length, pos + (r.bool(0.5) ? r.int(1, 4) : r.int(1, 2 * maxBeats)));
      const stop = beats.slice(pos, to).findIndex((b) => b.stop);
      if (stop >= 0) to = pos + stop + 1;
      segs.push({ from: pos, to, stop: stop >= 0 });
      pos = to;
    }
    return segs;
  });
  const steps: Step[] = [];
  const expected: Expected[] = [];
  const queued: number[] = [];
  const open = qps.map(() => 0);
  const ofQp = qps.map(() => 0);
  let inputIndex = 0;
  let segments = 0;
  let switches = 0;
  let drops = 0;
  let restarts = 0;
  let peakOpen = 0;
  let last = -1;
  let turn = 0;
  const active = qps.length;
  for (;;) {
    const ready = cut.map((s, i) => (s.length ? i : -1)).filter((i) => i >= 0);
    if (!ready.length) break;
    let i: number;
    if (opts.interleave === 'same') i = ready[0]!;
    else if (opts.interleave === 'random') i = r.pick(ready);
    else {
      while (!cut[turn % active]!.length) turn++;
      i = turn++ % active;
    }
    const seg = cut[i]!.shift()!;
    const qp = qps[i]!;
    const beats = streams[i]!.slice(seg.from, seg.to);
    steps.push({ kind: 'segment', qp, beats: beats.map((b) => b.beat) });
    segments++;
    if (i !== last) switches++;
    last = i;
    for (const b of beats) {
      open[i]!++;
      if (b.lastOf) {
        expected.push({ qp, ofQp: ofQp[i]!++, data: b.lastOf.data, verdict: b.lastOf.verdict, lastIn: inputIndex });
        queued.push(Math.ceil(open[i]! / REASM_PAGE_BEATS));
        open[i] = 0;
      }
      inputIndex++;
    }
    peakOpen = Math.max(peakOpen, open.filter((n) => n > 0).length);
    if (seg.stop) {
      const openPages = open.reduce((a, n) => a + Math.ceil(n / REASM_PAGE_BEATS), 0);
      steps.push({ kind: 'cfg', qp, before: queued.length, openPages });
      if (open[i]) {
        queued.push(-Math.ceil(open[i]! / REASM_PAGE_BEATS));
        drops++;
      } else restarts++;
      open[i] = 0;
    }
  }
  // The pool run dry (nothing open now): a page, a beat, then the whole pool, on one QP. The writer
  // has every page once the first two and pages − 2 pages of the third are in.
  const mainBeats = inputIndex;
  const mainUlpdus = expected.length;
  const dry: AxisSendBeat[] = [];
  for (const data of [r.bytes(r.int(pageBytes - W + 1, pageBytes)), r.bytes(r.int(1, W)), r.bytes(r.int((pages - 1) * pageBytes + 1, pages * pageBytes))]) {
    const verdict = r.bool(0.75) ? PASSED : Number(MPA_RX_VERDICT.encode({ passed: 0, llp_err: r.int(1, 255) }));
    const beats = beatsOf(r, W, qps[0]!, data, verdict);
    dry.push(...beats);
    inputIndex += beats.length;
    expected.push({ qp: qps[0]!, ofQp: ofQp[0]!++, data, verdict, lastIn: inputIndex - 1 });
    queued.push(Math.ceil(beats.length / REASM_PAGE_BEATS));
  }
  steps.push({ kind: 'exhaust', qp: qps[0]!, beats: dry, before: mainUlpdus, stallAt: (pages - 1) * REASM_PAGE_BEATS + 1 });
  const totalBytes = [...streams.flat().map((b) => b.beat), ...dry].reduce((a, b) => a + (b.tkeep === (1n << BigInt(W)) - 1n ? W : b.tkeep!.toString(2).length), 0);
  return { steps, expected, queued, segments, switches, drops, restarts, totalBytes, peakOpen, mainBeats, mainUlpdus };
}

/**
 * The Verilog of the block with a pool of `poolBytes` (no name pattern in sources.ts says the pool):
 * generated from the module object into a content-addressed directory with its rnic.f and
 * manifest.json, and opened as an RTL directory.
 */
function poolVariantDir(W: number, qps: number, poolBytes: number): string {
  const m = ulpduReasmModule(W, { qps, poolBytes });
  const files = withDescendants(m).map((x) => ({ name: `${x.name}.v`, text: emitVerilog(x, { regenerate: REGENERATE }) }));
  const hash = createHash('sha256');
  for (const f of files) hash.update(f.text);
  const dir = join(cacheDir('gen'), `${m.name}-pool${poolBytes}-${hash.digest('hex').slice(0, 16)}`);
  if (existsSync(dir)) return dir;
  // Written beside and renamed, so parallel test workers never read half a directory.
  const tmp = `${dir}.tmp-${process.pid}`;
  mkdirSync(tmp, { recursive: true });
  for (const f of files) writeFileSync(join(tmp, f.name), f.text);
  writeFileSync(join(tmp, 'rnic.f'), files.map((f) => f.name).join('\n') + '\n');
  writeFileSync(join(tmp, 'manifest.json'), JSON.stringify({ modules: [{ name: m.name, ports: portsOf(m) }] }, null, 1));
  try {
    renameSync(tmp, dir);
  } catch {
    rmSync(tmp, { recursive: true, force: true });
  }
  return dir;
}

const hexOf = (b: Uint8Array, n = 24): string => Buffer.from(b.subarray(0, n)).toString('hex') + (b.length > n ? `… (${b.length} octets)` : ` (${b.length} octets)`);
const verdictText = (v: number): string => {
  const d = MPA_RX_VERDICT.decode(BigInt(v));
  return `passed ${d.passed}, llp_err ${d.llp_err}`;
};

export function cosimUlpduReasm(opts: UlpduReasmOptions): UlpduReasmResult {
  const { width: W, qps } = opts;
  const poolBytes = opts.poolBytes ?? REASM_POOL_BYTES;
  const pages = poolBytes / (REASM_PAGE_BEATS * W);
  const module = ulpduReasmName(W, qps);
  if (opts.poolBytes !== undefined && opts.poolBytes !== REASM_POOL_BYTES && opts.rtlDir !== undefined) {
    throw new Error(`${module}: poolBytes builds its own variant; it cannot be combined with rtlDir`);
  }
  const variant = poolBytes !== REASM_POOL_BYTES ? { rtlDir: poolVariantDir(W, qps, poolBytes) } : {};
  const tb = new DutBench(...DutBench.opening(module, opts.seed, { ...dutSelection(opts), ...variant }));
  const { model, r } = tb;
  const p = opts.pause ?? r.int(0, 50) / 100;
  const sp = opts.sinkPause ?? p;
  const inMon = tb.monitor('s_axis');
  const source = tb.source('s_axis');
  const sink = tb.sink('m_axis');
  const outMon = tb.monitor('m_axis');
  source.setPause(tb.pause(p));
  // m_axis held while the pool is run dry, never paused after it.
  const sinkPause = tb.pause(sp);
  let sinkHeld = false;
  let sinkLetGo = false;
  sink.setPause({ next: () => sinkHeld || (!sinkLetGo && sinkPause.next()) });
  const [cfgValid, cfgQp, cfgReady, idle] = [model.handle('cfg_valid'), model.handle('cfg_qp'), model.handle('cfg_ready'), model.handle('idle')];
  const streams = Math.min(opts.streams ?? Math.min(qps, 8), opts.interleave === 'alternate' ? 2 : qps);
  const ids = streamQps(r, qps, streams);
  const work = plan(r, W, pages, ids, opts);

  const mismatches = new Tally<UlpduReasmMismatch>(1);
  const totalBeats = work.steps.reduce((a, s) => a + (s.kind === 'cfg' ? 0 : s.beats.length), 0);
  // With back-pressure p on both sides a beat takes about 1/(1-p) cycles; far more means it stopped.
  const deadline = model.cycles + 2 * Math.max(qps, pages) + Math.ceil((20 * totalBeats) / (1 - Math.max(p, sp))) + 50 * work.segments + 4000;
  let hung: string | null = null;
  const waitFor = (done: () => boolean, what: string, until = deadline): boolean => {
    while (!done()) {
      if (model.cycles >= until) {
        hung ??= what;
        return false;
      }
      tb.cycle();
    }
    return true;
  };

  // Each QP's cfg_rfc7306 (its parity), given back with every beat of its ULPDUs (m_rfc7306).
  const rfc7306 = model.handle('cfg_rfc7306');
  const outRfc: number[] = [];
  const [mValid, mReady, mRfc] = [model.handle('m_axis_tvalid'), model.handle('m_axis_tready'), model.handle('m_rfc7306')];
  tb.add({ sample: () => void (model.peekPreNumber(mValid) && model.peekPreNumber(mReady) && outRfc.push(model.peekPreNumber(mRfc))) });
  // idle, every cycle (the pre-edge snapshot of edge c): m_axis_tvalid 0 while idle is 1 and for
  // IDLE_LEAD − 1 cycles after (whatever comes out later was written since). Once per ULPDU.
  let [outSeen, whole, reported, idleAt] = [0, 0, -1, -IDLE_LEAD];
  tb.add({
    sample: () => {
      const c = model.cycles - 1;
      if (model.peekPreNumber(idle)) idleAt = c;
      if (model.peekPreNumber(mValid) && c - idleAt < IDLE_LEAD && whole !== reported) {
        const e = work.expected[whole];
        const what = c === idleAt ? 'idle = 1 with m_axis_tvalid = 1' : `m_axis_tvalid = 1 ${c - idleAt} cycles after idle read 1 (nothing is written and out in fewer than ${IDLE_LEAD})`;
        mismatches.add({ ulpdu: whole, qp: e?.qp ?? -1, ofQp: e?.ofQp ?? -1, beat: -1, cycle: c, what, expected: `idle 0 in cycles ${c - IDLE_LEAD + 1} to ${c}`, actual: `idle 1 in cycle ${idleAt}` });
        reported = whole;
      }
      for (; outSeen < outMon.beats.length; outSeen++) if (outMon.beats[outSeen]!.tlast) whole++;
    },
  });
  const cfgQpNow = (qp: number) => {
    model.pokeNumber(cfgQp, qp);
    model.pokeNumber(rfc7306, qp & 1);
    model.pokeNumber(cfgValid, 1);
    // Held until taken (cfg_ready low while an earlier drop is under way).
    let taken = false;
    while (!taken && !hung) {
      tb.cycle();
      taken = model.peekPreNumber(cfgReady) === 1;
      if (!taken && model.cycles >= deadline) hung = `cfg of QP ${qp} taken`;
    }
    model.pokeNumber(cfgValid, 0);
  };
  tb.reset();
  model.pokeNumber(cfgValid, 0);
  waitFor(() => model.peekNumber(cfgReady) === 1, 'cfg_ready after the init sweep');
  for (const qp of ids) cfgQpNow(qp);
  // The last cfg's drop done before the traffic starts (the rates below count from here).
  waitFor(() => model.peekNumber(cfgReady) === 1, 'cfg_ready after the first cfgs');
  const c0 = model.cycles;
  // Pages still held by the first `before` queued ULPDUs once `received` whole ones are out: the
  // whole ones not out and the drops among and behind them; drops behind the last one out only
  // until the reader has skipped them (the block idle).
  const heldPages = (received: number, before: number): number => {
    let whole = 0;
    let held = 0;
    for (let i = 0; i < before; i++) {
      const q = work.queued[i]!;
      if (q > 0 && whole++ < received) held = 0;
      else held += Math.abs(q);
    }
    return whole <= received && model.peekNumber(idle) === 1 ? 0 : held;
  };
  for (const step of work.steps) {
    if (hung) break;
    if (step.kind === 'segment') {
      source.sendBeats(step.beats);
      continue;
    }
    if (step.kind === 'exhaust') {
      // The pool run dry: nothing else in it, m_axis held until the writer has every page and waits.
      if (!waitFor(() => source.idle && sink.receivedCount >= step.before && model.peekNumber(idle) === 1, `every ULPDU out before the pool is run dry (${step.before})`)) break;
      sinkHeld = true;
      const from = inMon.beats.length;
      source.sendBeats(step.beats);
      if (!waitFor(() => inMon.beats.length >= from + step.stallAt, `the pool filled with m_axis held (${step.stallAt} beats in)`)) break;
      tb.run(16);
      [sinkHeld, sinkLetGo] = [false, true];
      // Its two short ULPDUs out, the writer needs both their pages: the long one must follow.
      waitFor(() => sink.receivedCount >= step.before + 3, 'the ULPDU of the whole pool, written with the pages the reader gave back', model.cycles + 4 * step.beats.length + 1000);
      continue;
    }
    // A new connection on the QP whose stream stopped mid-ULPDU: once every beat sent before is in
    // the block and has a page (what is queued and open fits the pool), and has had the cycles to
    // be written, cfg drops the partial ULPDU.
    const accepted = opts.cfgAt === 'accepted';
    if (!waitFor(() => source.idle && (accepted || heldPages(sink.receivedCount, step.before) + step.openPages <= pages), `QP ${step.qp}'s beats written before its cfg (${work.queued.slice(0, step.before).filter((q) => q > 0).length} whole ULPDUs before it)`)) break;
    if (!accepted) tb.run(8);
    cfgQpNow(step.qp);
  }
  if (!hung) waitFor(() => source.idle && sink.receivedCount >= work.expected.length && model.peekNumber(idle) === 1, 'every ULPDU out and the block idle');
  const drained = `${sink.receivedCount} of ${work.expected.length} ULPDUs out, source ${source.idle ? 'idle' : `busy (${inMon.beats.length} of ${totalBeats} beats in)`}, idle ${model.peekNumber(idle)}, cfg_ready ${model.peekNumber(cfgReady)}`;
  const cycles = (outMon.beats.at(-1)?.cycle ?? model.cycles) + 1 - c0;
  // Anything put out after the expected ULPDUs is a fault too: give it time to show.
  if (!hung) tb.run(4 * REASM_PAGE_BEATS + 64);
  if (hung) mismatches.add({ ulpdu: -1, qp: -1, ofQp: -1, beat: -1, cycle: model.cycles, what: `the block stopped (waiting for ${hung})`, expected: `${work.expected.length} ULPDUs out, every beat taken, idle`, actual: drained });

  // Output frames by tlast, each checked beat by beat against the ULPDU due next in input order.
  const frames: MonitoredBeat[][] = [];
  let cur: MonitoredBeat[] = [];
  for (const b of outMon.beats) {
    cur.push(b);
    if (b.tlast) {
      frames.push(cur);
      cur = [];
    }
  }
  if (cur.length) frames.push(cur);
  const allOnes = (1n << BigInt(W)) - 1n;
  let delivered = 0;
  let beatAt = 0;
  frames.forEach((f, i) => {
    const first = beatAt;
    beatAt += f.length;
    const e = work.expected[i];
    const add = (beat: number, what: string, expected: string, actual: string) =>
      mismatches.add({ ulpdu: i, qp: e?.qp ?? -1, ofQp: e?.ofQp ?? -1, beat, cycle: f[Math.max(beat, 0)]!.cycle, what, expected, actual });
    if (!e) return add(0, 'a ULPDU beyond those sent whole', 'nothing', `QP ${f[0]!.tid}, ${f.length} beats`);
    const n = Math.ceil(e.data.length / W);
    for (let k = 0; k < f.length; k++) {
      const b = f[k]!;
      const lanes = k < n - 1 ? W : e.data.length - (n - 1) * W;
      const keep = k < n ? (k < n - 1 ? allOnes : (1n << BigInt(lanes)) - 1n) : 0n;
      if (b.tid !== e.qp) return add(k, 'tid (a beat of another QP inside the ULPDU, or ULPDUs out of order)', String(e.qp), String(b.tid));
      if (Number(b.tuser) !== e.verdict) return add(k, 'tuser (the verdict, on every beat)', verdictText(e.verdict), verdictText(Number(b.tuser)));
      if (outRfc[first + k] !== (e.qp & 1)) return add(k, "m_rfc7306 (its QP's cfg_rfc7306, on every beat)", String(e.qp & 1), String(outRfc[first + k]));
      if (k >= n) return add(k, 'ULPDU length (tlast)', `${n} beats`, `${f.length} beats${b.tlast ? '' : ', no tlast'}`);
      if (b.tkeep !== keep) return add(k, 'tkeep', keep.toString(16), b.tkeep.toString(16));
      if (!Buffer.from(b.data.subarray(0, lanes)).equals(Buffer.from(e.data.subarray(k * W, k * W + lanes)))) {
        return add(k, 'octets', hexOf(e.data.subarray(k * W, k * W + lanes)), hexOf(b.data.subarray(0, lanes)));
      }
    }
    if (f.length < n || !f.at(-1)!.tlast) return add(f.length - 1, 'ULPDU length (tlast)', `${n} beats`, `${f.length} beats${f.at(-1)!.tlast ? '' : ', no tlast'}`);
    delivered++;
  });
  if (frames.length < work.expected.length && !hung) {
    const e = work.expected[frames.length]!;
    mismatches.add({ ulpdu: frames.length, qp: e.qp, ofQp: e.ofQp, beat: -1, cycle: model.cycles, what: 'ULPDU missing', expected: hexOf(e.data), actual: 'nothing' });
  }

  // Rates (exact with pause 0): input stalls against context switches, output gaps.
  const ins = inMon.beats.slice(0, work.mainBeats);
  let inputSwitches = ins.length ? 1 : 0;
  for (let i = 1; i < ins.length; i++) if (ins[i]!.tid !== ins[i - 1]!.tid) inputSwitches++;
  const inputStalls = ins.length ? ins.at(-1)!.cycle - ins[0]!.cycle + 1 - ins.length : 0;
  let outputGapsWithin = 0;
  let outputGapsBetween = 0;
  let minLatency = Infinity;
  frames.slice(0, work.mainUlpdus).forEach((f, i) => {
    outputGapsWithin += f.at(-1)!.cycle - f[0]!.cycle + 1 - f.length;
    const e = work.expected[i];
    const lastIn = e && ins[e.lastIn];
    if (!lastIn) return;
    minLatency = Math.min(minLatency, f[0]!.cycle - lastIn.cycle);
    const before = frames[i - 1]?.at(-1);
    if (before && lastIn.cycle <= before.cycle - 8) outputGapsBetween += f[0]!.cycle - before.cycle - 1;
  });
  tb.close();
  return {
    module,
    seed: opts.seed,
    streamQps: ids,
    poolBytes,
    pages,
    pause: p,
    sinkPause: sp,
    segments: work.segments,
    switches: work.switches,
    ulpdus: work.expected.length,
    delivered,
    drops: work.drops,
    restarts: work.restarts,
    totalBytes: work.totalBytes,
    peakOpen: work.peakOpen,
    inputBeats: inMon.beats.length,
    outputBeats: outMon.beats.length,
    cycles,
    inputSwitches,
    inputStalls,
    outputGapsWithin,
    outputGapsBetween,
    minLatency,
    mismatches: mismatches.count,
    ...(mismatches.first && { firstMismatch: mismatches.first }),
  };
}
