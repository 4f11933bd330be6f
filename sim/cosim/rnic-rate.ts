import { CQ_SENT } from '../../hdl-gen/blocks/rnic-top';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { IRD_ORD_NO_NEGOTIATE, MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import { MpaDeframer, MpaFramer, type MpaStreamConfig } from '../../ts-model/mpa';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { prng } from '../../ts-model/util/prng';
import type { SimModel } from '../verilator/model';
import { beats, rxInputCycles } from '../../ts-model/cost/cost-model';
import { cycleCheck, type CycleCheck } from './cycle-check';
import { BackgroundMemory } from '../harness/memory';
import { expectedUlpdus } from './ddp-tx';
import type { QpConfig } from './qp-config';
import { RnicBench, openTop, qpsOfTop } from './rnic-bench';
import type { RtlRegion } from './rx-peer';
import type { TxRequest } from './wr-request';

/**
 * Line rate of the whole datapath, `rnic_top_w<W>` (hdl-gen/blocks/rnic-top.ts), in Verilator
 * cycles, for issue 7's goal: the 64-octet configuration sustains a 100 Gb/s port at 250 MHz, that
 * is ≥ 50 octets of payload per cycle for 4 KiB RDMA Writes. No back-pressure anywhere, host
 * memory reads answered a fixed number of cycles after their handshake.
 *
 * - Transmit (measureTopTx): back-to-back RDMA Write work requests on one QP or spread over
 *   several; payload octets per cycle from the first m_axis beat to the last, and the wire
 *   efficiency (payload / FPDU octets on m_axis). Each QP's m_axis octets are deframed by the
 *   model's MpaDeframer and must be, ULPDU for ULPDU, what the model's RdmapEndpoint sends.
 * - Receive (measureTopRx): the FPDUs of back-to-back RDMA Writes (the model's segmenter and
 *   MpaFramer) into QP 0 at one beat per cycle, or (qps) the Writes round-robin over QPs with
 *   every FPDU a TCP segment of another QP; payload octets placed per cycle (mem_wr beats).
 *   Host memory must then hold every Write's payload at its place.
 *
 * A run whose output is wrong gives no figure: measureTopTx / measureTopRx throw.
 */

export interface TopRateOptions {
  /** RDMA Writes (default 64). */
  readonly writes?: number;
  /** Octets per Write (default 4096). */
  readonly length?: number;
  /**
   * Segments of at most mulpdu − 14 payload octets (default 8192: a 4 KiB Write is one): cfg_mulpdu
   * when transmitting, the peer's segmenter when receiving.
   */
  readonly mulpdu?: number;
  readonly markers?: boolean;
  readonly crc?: boolean;
  /** Transmit: memory read latency L (default 4): the data on the L-th clock edge after the read's handshake. */
  readonly latency?: number;
  /** The user's Verilog instead of the generated (a directory with rnic.f). */
  readonly rtlDir?: string;
  /** An open rnic_top_w<W> to run on (it is reset first and left open); otherwise one is opened and closed. */
  readonly model?: SimModel;
}

export interface TopTxOptions extends TopRateOptions {
  /** Writes go round-robin to QPs 0..qps−1 (default 1). */
  readonly qps?: number;
  /** Source buffers start this many octets past a W-aligned address (default 0). */
  readonly misalign?: number;
}

export interface TopRxOptions extends TopRateOptions {
  /**
   * Writes go round-robin to QPs 0..qps−1 (default 1), each FPDU one TCP segment (FPDU alignment,
   * RFC 5044 §8) and the segments in turn, so every segment is another QP's: the shared mpa_rx
   * switches context at each. With one QP the stream goes in 4 KiB segments.
   */
  readonly qps?: number;
}

/** Cycle counts of a run of m_axis or mem_wr beats. */
export interface BeatTiming {
  /** Cycles from the first beat to the last, both included. */
  readonly cycles: number;
  readonly beats: number;
  /** Cycles without a beat inside the window, between two packets (FPDUs or Writes) … */
  readonly gapsBetween: number;
  /** … and inside one. */
  readonly gapsInside: number;
}

export interface TopTxRate {
  readonly width: number;
  readonly writes: number;
  readonly qps: number;
  readonly mulpdu: number;
  readonly markers: boolean;
  readonly crc: boolean;
  readonly latency: number;
  readonly payloadBytes: number;
  /** FPDU octets on m_axis (markers, CRC, length field and pad included). */
  readonly wireBytes: number;
  readonly fpdus: number;
  readonly timing: BeatTiming;
  /** Payload octets per cycle over the m_axis window. */
  readonly bytesPerCycle: number;
  /** Payload octets / m_axis octets. */
  readonly efficiency: number;
  readonly beatsPerWrite: number;
  /** Cycles from the first work-request handshake to the first m_axis beat. */
  readonly firstBeatLatency: number;
}

export interface TopRxRate {
  readonly width: number;
  readonly writes: number;
  readonly mulpdu: number;
  readonly markers: boolean;
  readonly crc: boolean;
  readonly payloadBytes: number;
  /** TCP payload octets into s_axis (the FPDUs). */
  readonly wireBytes: number;
  readonly fpdus: number;
  /** s_axis: cycles from the first beat taken to the last, and the beats. */
  readonly input: BeatTiming;
  /** mem_wr: cycles from the first write beat to the last, and the beats. */
  readonly placement: BeatTiming;
  /** Payload octets placed per cycle over the mem_wr window. */
  readonly bytesPerCycle: number;
  /** Steady state: payload per cycle from the last beat of the first Write to the last beat of the last one. */
  readonly steadyBytesPerCycle: number;
  readonly memBeatsPerWrite: number;
  /** Cycles from the first s_axis beat to the first mem_wr beat. */
  readonly firstWriteLatency: number;
  /**
   * With every FPDU a segment of its own (qps > 1): each FPDU's s_axis cycles (its last beat taken
   * to the last beat of the one before) against the cost model's rxInputCycles (its beats, and
   * RX_SWITCH_CYCLES when its QP is not the last one's): the shared receive path's input stalls
   * only where the model says. Null when the stream goes in larger segments.
   */
  readonly cycleCheck: CycleCheck | null;
}

const defaults = (o: TopRateOptions) => ({
  writes: o.writes ?? 64,
  length: o.length ?? 4096,
  mulpdu: o.mulpdu ?? 8192,
  markers: o.markers ?? true,
  crc: o.crc ?? true,
  latency: o.latency ?? 4,
});

/** S0 of every QP (both directions), and where each direction's first FPDU starts after it. */
export const S0 = 0x7a3c_1d15;
export const txSeq = (qp: number): number => (S0 + 4 * (37 + 101 * qp)) >>> 0;
export const rxSeq = (qp: number): number => (S0 + 4 * (5 + 29 * qp)) >>> 0;
export const PD = 7;
export const INITIAL_MSN = 1;
const WRITE_STAG = 0x0142;
const SINK_BASE = 0x1000_0000n;
const SOURCE_BASE = 0x2000_0000n;


/** Sums the idle cycles of a beat log (cycle of each beat, and whether it ends a packet). */
function beatTiming(at: readonly number[], ends: readonly boolean[]): BeatTiming {
  let gapsBetween = 0;
  let gapsInside = 0;
  for (let i = 1; i < at.length; i++) {
    const gap = at[i]! - at[i - 1]! - 1;
    if (ends[i - 1]) gapsBetween += gap;
    else gapsInside += gap;
  }
  return { cycles: at.length ? at[at.length - 1]! - at[0]! + 1 : 0, beats: at.length, gapsBetween, gapsInside };
}

export interface TopConfig {
  readonly mulpdu: number;
  readonly markers: boolean;
  readonly crc: boolean;
}

/** Every QP's context in a rate run: the same MPA settings both ways, its own sequence numbers. */
export const qpConfig = (c: TopConfig, qp: number): { qp: number; c: QpConfig } => ({
  qp,
  c: {
    pd: PD, ird: 4, ord: IRD_ORD_NO_NEGOTIATE, msn: INITIAL_MSN, mulpdu: c.mulpdu, maxUlpdu: MAX_ULPDU_LENGTH, bigEndian: false, rfc7306: true, crc: c.crc,
    rx: { s0: S0, seq: rxSeq(qp), markers: c.markers },
    tx: { s0: S0, seq: txSeq(qp), markers: c.markers },
  },
});

/**
 * The top's bench (rnic-bench.ts) as the rates run it: no back-pressure, the completion queue
 * always ready, beat timing recorded; host memory either the transmit runs' read-only background
 * (reads at a fixed latency) or a HostMemoryPort.
 */
const rateBench = (model: SimModel, memory?: { background: BackgroundMemory; latency: number }): RnicBench =>
  new RnicBench(model, { r: prng(0x7a7e), measure: true, ...(memory && { memory }) });

// ---- transmit --------------------------------------------------------------------------------------

export interface TopTxRun {
  readonly rate: TopTxRate;
  /** Per QP: the ULPDUs its m_axis octets deframe to, and what the model sends for its Writes. */
  readonly ulpdus: Uint8Array[][];
  readonly expected: Uint8Array[][];
  /** MPA errors of the deframers, protocol violations, mem_wr beats, wrong completions. */
  readonly problems: string[];
  /** m_axis beats taken: cycle, tlast and tid of each (to see where the bubbles are). */
  readonly beats: { readonly at: readonly number[]; readonly last: readonly boolean[]; readonly tid: readonly number[] };
  /** Work-request handshakes, in cycles. */
  readonly wrAt: readonly number[];
}

/** The Writes of a transmit run: `writes` of `length` octets, Write i on QP i mod qps. */
export function txWrites(W: number, o: TopTxOptions): { qp: number; req: TxRequest & { kind: 'write' } }[] {
  const d = defaults(o);
  const qps = o.qps ?? 1;
  const stride = BigInt(Math.ceil((d.length + W) / W) * W);
  return Array.from({ length: d.writes }, (_, i) => ({
    qp: i % qps,
    req: { kind: 'write' as const, stag: (0x5100 + (i % qps)) >>> 0, to: BigInt(i) * stride, addr: SOURCE_BASE + BigInt(i) * stride + BigInt(o.misalign ?? 0), len: d.length },
  }));
}

export function runTopTx(width: number, o: TopTxOptions = {}): TopTxRun {
  const W = width;
  const d = defaults(o);
  const qps = o.qps ?? 1;
  const model = o.model ?? openTop(W, o.rtlDir ? { rtlDir: o.rtlDir } : {});
  const background = new BackgroundMemory();
  const bench = rateBench(model, { background, latency: d.latency });
  if (qps < 1 || qps > bench.qps) throw new RangeError(`rnic_top_w${W} has ${bench.qps} QPs, asked for ${qps}`);
  const writes = txWrites(W, o);
  try {
    bench.start(Array.from({ length: bench.qps }, (_, qp) => qpConfig(d, qp)), []);
    bench.wr.pushAll(writes);
    bench.settle(`${d.writes} Writes to be sent`, 100_000 + 8 * d.writes * Math.ceil(d.length / W));
  } finally {
    if (!o.model) model.close();
  }

  const problems = [...bench.violations];
  const memWrites = bench.mem.writes.length;
  if (memWrites) problems.push(`${memWrites} mem_wr beats on a transmit-only run`);
  const sent = bench.cq.filter((e) => e.kind === CQ_SENT);
  if (sent.length !== writes.length || bench.cq.length !== sent.length) problems.push(`completion queue: ${sent.length} sent of ${bench.cq.length} entries, ${writes.length} Writes`);
  for (let qp = 0; qp < qps; qp++) {
    const want = writes.filter((x) => x.qp === qp).length;
    const got = sent.filter((e) => e.qp === qp).length;
    if (got !== want) problems.push(`QP ${qp}: ${got} sent completions for ${want} Writes`);
  }
  // Each QP's FPDUs, concatenated, are its TCP payload: deframed by the model.
  const frames = bench.mAxis.drain();
  const ulpdus: Uint8Array[][] = [];
  const expected: Uint8Array[][] = [];
  let wireBytes = 0;
  for (let qp = 0; qp < qps; qp++) {
    const deframer = new MpaDeframer(streamConfig(d, txSeq(qp)));
    const got: Uint8Array[] = [];
    for (const f of frames) {
      if (f.tid !== qp) continue;
      wireBytes += f.data.length;
      for (const e of deframer.push(f.data)) {
        if (e.kind === 'fpdu') got.push(e.ulpdu);
        else problems.push(`QP ${qp}: MPA ${e.kind} at FPDU ${e.index}: ${e.reason}`);
      }
    }
    ulpdus.push(got);
    expected.push(expectedUlpdus(writes.filter((x) => x.qp === qp).map((x) => x.req), background, { mulpdu: d.mulpdu, initialMsn: INITIAL_MSN }));
  }
  const stray = frames.filter((f) => f.tid >= qps).length;
  if (stray) problems.push(`${stray} FPDUs on QPs that have no Writes`);
  const timing = beatTiming(bench.netBeats.at, bench.netBeats.last);
  const payloadBytes = d.writes * d.length;
  return {
    rate: {
      width: W, writes: d.writes, qps, mulpdu: d.mulpdu, markers: d.markers, crc: d.crc, latency: d.latency,
      payloadBytes, wireBytes, fpdus: frames.length, timing,
      bytesPerCycle: payloadBytes / timing.cycles,
      efficiency: payloadBytes / wireBytes,
      beatsPerWrite: timing.beats / d.writes,
      firstBeatLatency: bench.netBeats.at[0]! - bench.wrAt[0]!,
    },
    ulpdus,
    expected,
    problems,
    beats: bench.netBeats,
    wrAt: bench.wrAt,
  };
}

const streamConfig = (d: TopConfig, seq: number): MpaStreamConfig => ({ s0: S0, markers: d.markers, crc: d.crc, seq });

const sameUlpdus = (a: readonly Uint8Array[][], b: readonly Uint8Array[][]): boolean =>
  a.length === b.length && a.every((x, q) => x.length === b[q]!.length && x.every((u, i) => Buffer.compare(u, b[q]![i]!) === 0));

/** Transmit line rate (see the module comment); throws when the FPDUs are not the model's. */
export function measureTopTx(width: number, o: TopTxOptions = {}): TopTxRate {
  const run = runTopTx(width, o);
  if (run.problems.length) throw new Error(`rnic_top_w${width} transmit: ${run.problems.slice(0, 5).join('; ')}`);
  if (!sameUlpdus(run.ulpdus, run.expected)) throw new Error(`rnic_top_w${width} transmit: the FPDUs do not deframe to the model's ULPDUs`);
  return run.rate;
}

// ---- receive ---------------------------------------------------------------------------------------

export interface TopRxRun {
  readonly rate: TopRxRate;
  /** Per Write: where it was placed, the payload sent and what host memory holds there after the run. */
  readonly placed: { readonly addr: bigint; readonly sent: Uint8Array; readonly memory: Uint8Array }[];
  readonly problems: string[];
}

export function runTopRx(width: number, o: TopRxOptions = {}): TopRxRun {
  const W = width;
  const d = defaults(o);
  const model = o.model ?? openTop(W, o.rtlDir ? { rtlDir: o.rtlDir } : {});
  const bench = rateBench(model);
  const r = prng(0x4b1d);
  const stride = Math.ceil(d.length / W) * W;
  const region: RtlRegion = { stag: WRITE_STAG, pd: PD, base: SINK_BASE, length: BigInt(stride * d.writes), access: ['remote-write'], va: false, invalidatable: false };
  const qps = o.qps ?? 1;
  // The peer of each QP: its segmenter and its MPA framer (our receive direction: cfg_rx_seq).
  const framers = Array.from({ length: qps }, (_, q) => new MpaFramer(streamConfig(d, rxSeq(q))));
  const payloads: Uint8Array[] = [];
  const perQp: Uint8Array[][] = framers.map(() => []);
  let fpdus = 0;
  for (let i = 0; i < d.writes; i++) {
    const payload = r.bytes(d.length);
    payloads.push(payload);
    for (const seg of segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: WRITE_STAG, to: BigInt(i * stride), payload }, d.mulpdu)) {
      perQp[i % qps]!.push(framers[i % qps]!.frame(seg).wire);
      fpdus++;
    }
  }
  // The segments in turn: FPDU k of every QP, then FPDU k + 1.
  const segments: { tid: number; wire: Uint8Array }[] = [];
  for (let k = 0; segments.length < fpdus; k++) perQp.forEach((fs, q) => fs[k] && segments.push({ tid: q, wire: fs[k]! }));
  const stream = Buffer.concat(segments.map((g) => g.wire));
  const host = bench.mem;
  const st: Record<string, number> = {};
  try {
    bench.start(Array.from({ length: qps }, (_, q) => qpConfig(d, q)), [region]);
    host.clear();
    if (qps === 1) {
      // TCP payload in full beats (MPA takes segments of any size; tlast means nothing to it).
      const CHUNK = 4096;
      for (let at = 0; at < stream.length; at += CHUNK) bench.sAxis.send(stream.subarray(at, Math.min(at + CHUNK, stream.length)));
    } else for (const g of segments) bench.sAxis.send(g.wire, { tid: g.tid });
    bench.settle(`${d.writes} Writes to be placed`, 100_000 + 8 * Math.ceil(stream.length / W));
    // No QP failed: MPA passed every FPDU, nothing stopped.
    for (let q = 0; q < qps; q++) {
      const s = bench.qpStatus(q);
      st[`QP ${q}: MPA error`] = Number(s.mpaErr);
      st[`QP ${q}: receive stopped`] = Number(s.rxStopped);
      st[`QP ${q}: transmit stopped`] = Number(s.txStopped);
    }
  } finally {
    if (!o.model) model.close();
  }
  const problems = [...bench.violations, ...host.faults];
  for (const [k, v] of Object.entries(st)) if (v !== 0) problems.push(`${k} = ${v}`);
  if (bench.cq.length) problems.push(`${bench.cq.length} completion-queue entries (an RDMA Write completes nothing at the Data Sink), first kind ${bench.cq[0]!.kind}`);
  if (bench.netBeats.at.length) problems.push(`${bench.netBeats.at.length} m_axis beats (nothing to answer)`);
  const placed = payloads.map((sent, i) => {
    const addr = SINK_BASE + BigInt(i * stride);
    return { addr, sent, memory: host.memory.read(addr, d.length) };
  });
  const writes = host.writes;
  const outside = writes.filter((w) => w.addr < SINK_BASE || w.addr >= SINK_BASE + region.length).length;
  if (outside) problems.push(`${outside} mem_wr beats outside the region`);
  // Which Write each mem_wr beat belongs to: its address.
  const writeOf = (a: bigint) => Number((a - SINK_BASE) / BigInt(stride));
  const ends = writes.map((w, i) => i === writes.length - 1 || writeOf(writes[i + 1]!.addr) !== writeOf(w.addr));
  const placement = beatTiming(writes.map((w) => w.cycle), ends);
  const input = beatTiming(bench.inBeats, bench.inBeats.map(() => false));
  const firstEnd = ends.indexOf(true);
  if (!writes.length) problems.push('nothing written to host memory');
  // The cost model per FPDU, tlast to tlast on s_axis (one segment per FPDU, each from a fresh beat).
  let check: CycleCheck | null = null;
  if (qps > 1 && bench.inBeats.length === segments.reduce((n, g) => n + beats(g.wire.length, W), 0)) {
    const pairs: { measured: number; model: number }[] = [];
    let last = -1;
    segments.forEach((g, k) => {
      const n = beats(g.wire.length, W);
      last += n;
      if (k === 0) return;
      const model = rxInputCycles(W, { wireLength: g.wire.length, switched: g.tid !== segments[k - 1]!.tid });
      pairs.push({ measured: bench.inBeats[last]! - bench.inBeats[last - n]!, model });
    });
    check = cycleCheck(pairs);
  } else if (qps > 1) problems.push(`${bench.inBeats.length} s_axis beats taken for ${segments.length} segments`);
  const payloadBytes = d.writes * d.length;
  const last = writes[writes.length - 1]?.cycle ?? 0;
  return {
    rate: {
      width: W, writes: d.writes, mulpdu: d.mulpdu, markers: d.markers, crc: d.crc,
      payloadBytes, wireBytes: stream.length, fpdus, input, placement,
      bytesPerCycle: payloadBytes / placement.cycles,
      steadyBytesPerCycle: d.writes > 1 && firstEnd >= 0 ? ((d.writes - 1) * d.length) / (last - writes[firstEnd]!.cycle) : payloadBytes / placement.cycles,
      memBeatsPerWrite: writes.length / d.writes,
      firstWriteLatency: (writes[0]?.cycle ?? 0) - bench.inBeats[0]!,
      cycleCheck: check,
    },
    placed,
    problems,
  };
}

/** Receive placement rate (see the module comment); throws when a Write is not in host memory. */
export function measureTopRx(width: number, o: TopRxOptions = {}): TopRxRate {
  const run = runTopRx(width, o);
  if (run.problems.length) throw new Error(`rnic_top_w${width} receive: ${run.problems.slice(0, 5).join('; ')}`);
  const bad = run.placed.findIndex((p) => Buffer.compare(p.sent, p.memory) !== 0);
  if (bad >= 0) throw new Error(`rnic_top_w${width} receive: Write ${bad} is not in host memory at 0x${run.placed[bad]!.addr.toString(16)}`);
  return run.rate;
}

// ---- the figures -----------------------------------------------------------------------------------

export interface RateRow {
  readonly name: string;
  readonly width: number;
  readonly value: number;
  readonly unit: string;
}

/**
 * The line-rate figures of issue 7 at W = 8 and 64 (4 KiB RDMA Writes, no back-pressure, memory
 * reads after 4 cycles, and after 200 for transmit): transmit on one QP and on four, MULPDU 8192 (one segment per Write) and
 * 1460, markers and CRC on, and markers off; receive placement on QP 0, and on four QPs with every
 * segment another QP's. JSON-able rows.
 */
export function rnicRateFigures(o: { readonly widths?: readonly number[]; readonly writes?: number; readonly rtlDir?: string } = {}): RateRow[] {
  const rows: RateRow[] = [];
  const writes = o.writes ?? 64;
  for (const W of o.widths ?? [8, 64]) {
    const model = openTop(W, o.rtlDir ? { rtlDir: o.rtlDir } : {});
    // Every QP of the top (the default 1024), one Write each: every Write and every FPDU another QP's.
    const all = qpsOfTop(model);
    try {
      const tx = (what: string, t: TopTxOptions) => {
        const r = measureTopTx(W, { writes, model, ...t });
        const name = `rnic_top_w${W} transmit, 4 KiB RDMA Writes, ${what}`;
        rows.push({ name: `${name}: payload`, width: W, value: r.bytesPerCycle, unit: 'B/cycle' });
        rows.push({ name: `${name}: wire efficiency`, width: W, value: 100 * r.efficiency, unit: '%' });
        rows.push({ name: `${name}: m_axis beats per Write`, width: W, value: r.beatsPerWrite, unit: 'beats' });
      };
      tx('1 QP, MULPDU 8192, markers+CRC', { qps: 1 });
      tx('4 QPs, MULPDU 8192, markers+CRC', { qps: 4 });
      tx('1 QP, MULPDU 1460, markers+CRC', { qps: 1, mulpdu: 1460 });
      tx('4 QPs, MULPDU 1460, markers+CRC', { qps: 4, mulpdu: 1460 });
      tx('1 QP, MULPDU 8192, CRC, no markers', { qps: 1, markers: false });
      // Host memory behind PCIe: reads answered 200 cycles later (800 ns at 250 MHz).
      tx('1 QP, MULPDU 8192, markers+CRC, read latency 200', { qps: 1, latency: 200 });
      tx('4 QPs, MULPDU 8192, markers+CRC, read latency 200', { qps: 4, latency: 200 });
      const everyQp = { qps: all, writes: Math.max(writes, all) };
      if (all > 4) {
        tx(`${all} QPs, every Write another QP, MULPDU 8192, markers+CRC`, everyQp);
        tx(`${all} QPs, every Write another QP, MULPDU 1460, markers+CRC`, { ...everyQp, mulpdu: 1460 });
      }
      const rx = (what: string, t: TopRxOptions) => {
        const r = measureTopRx(W, { writes, model, ...t });
        const name = `rnic_top_w${W} receive placement, 4 KiB RDMA Writes, ${what}`;
        rows.push({ name: `${name}: payload`, width: W, value: r.bytesPerCycle, unit: 'B/cycle' });
        rows.push({ name: `${name}: payload, steady state`, width: W, value: r.steadyBytesPerCycle, unit: 'B/cycle' });
        rows.push({ name: `${name}: mem_wr beats per Write`, width: W, value: r.memBeatsPerWrite, unit: 'beats' });
        if (r.cycleCheck) rows.push({ name: `${name}: FPDUs within ±5% of the cost model`, width: W, value: (100 * r.cycleCheck.within5Percent) / r.cycleCheck.fpdus, unit: '%' });
      };
      rx('MULPDU 8192, markers+CRC', {});
      rx('MULPDU 1460, markers+CRC', { mulpdu: 1460 });
      // Every FPDU a segment of another QP: a context switch of the shared mpa_rx at each.
      rx('4 QPs, every segment another QP, MULPDU 1460, markers+CRC', { qps: 4, mulpdu: 1460 });
      if (all > 4) {
        rx(`${all} QPs, every segment another QP, MULPDU 1460, markers+CRC`, { ...everyQp, mulpdu: 1460 });
        rx(`${all} QPs, every segment another QP, MULPDU 8192, markers+CRC`, everyQp);
      }
      rx('MULPDU 8192, CRC, no markers', { markers: false });
    } finally {
      model.close();
    }
  }
  return rows;
}
