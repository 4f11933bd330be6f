import type { RnicConfig } from '../../hdl-gen/gen/config';
import { errBits } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { IRD_ORD_NO_NEGOTIATE, MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import { MpaDeframer, MpaFramer, type MpaStreamConfig } from '../../ts-model/mpa';
import { Opcode, OPCODE_NAMES } from '../../ts-model/rdmap/constants';
import { RdmapError } from '../../ts-model/terminate-codes';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { modelEvent } from './events';
import type { RnicEvent } from '../../ts-model/rnic/events';
import { RxCounts } from './rx-counts';
import { faultyWire, opcodeName, taggedPayload, tcpSegments } from './peer-wire';
import { RnicBench } from './rnic-bench';
import { topModuleOf } from './rnic-axi-bench';
import { DDP_TX_RING } from '../../hdl-gen/blocks/ddp-tx-sched';
import { FaultTurns, RxPeer, newSideEffects, type RtlRegion, type StepSideEffects } from './rx-peer';
import { qpStartup, qpStreams, type QpConfig } from './qp-config';
import { completionBeforeData, firstMemoryDifference, memoryMismatch, type RnicMismatch, type TopRunResult } from './scoreboard';
import { describeUlpdu, sideBySide } from './ulpdu-text';
import { WireLog } from './wire-log';
import { TraceLog, fpduFields, placementRecords, traceRecorder, writeTraces } from './trace';

/**
 * Co-simulation of the whole datapath `rnic_top_w<W>` (hdl-gen/blocks/rnic-top.ts) against the
 * model: per QP, the model's two endpoints (sim/cosim/rx-peer.ts) with the RTL in place of the
 * local one, all QPs at once over one network port pair, one host memory and one completion queue.
 *
 * A step picks one or more QPs (their traffic interleaves on s_axis beat by beat) and, for each,
 * one operation: a message of the peer (every opcode, valid, or a fault from the 50 kinds that
 * raise every error code), or a work request of the local side (Write, Send, Immediate Data, Read,
 * Atomic, 0..64 KiB). Work requests go to the RTL's work-request port and transmit first; then
 * the peer's ULPDUs go in as MPA FPDUs (markers and CRC as the QP's connection has them, S0
 * anywhere, random TCP segmentation). After each phase the RTL settles, the model's endpoints get
 * the same inputs, and everything is compared:
 * - every FPDU the RTL sends: it must deframe (the model's MpaDeframer: CRC, markers, length) and
 *   equal octet for octet the model's framing of its ULPDU at the same sequence number; the ULPDUs
 *   themselves in order against the model's, per class (responses and Terminates; work requests:
 *   the two are separate queues of the RNIC, RFC 5040 §5.5, so only their order within each class
 *   is defined);
 * - every completion-queue entry (receive completions, Read/Atomic completions, Terminate sent or
 *   received, closure) against the model's events; `sent` entries count the work requests;
 * - completion order: a completion that says data has landed comes no earlier than the RTL's last
 *   write of what the model placed before it (RFC 5041 §5.3-5.4; completionOrder below);
 * - host memory wherever either side wrote, and every region and buffer at the end of a stream;
 * - protection: every octet the RTL writes must lie in a placement the model made on that QP and
 *   in memory that QP may write (`violations`).
 * A QP's stream ends a couple of messages after its first error, or after a random number of
 * operations; the QP is then reconfigured (a new connection) while the others go on.
 */

export interface RnicCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  /** Operations (peer messages and local work requests), over all QPs. */
  readonly ops: number;
  /** Probability that an operation is a fault (it ends that QP's stream). */
  readonly faults: number;
  /** The generator configuration of the top (QPs, STag depth; its width is `width`). */
  readonly config?: RnicConfig;
  /** QPs with traffic when the top has more (default ACTIVE_QPS, spread over the range). */
  readonly activeQps?: number;
  /** Verilate the top behind the sampled-inputs shim (default true; the benchmark's baseline turns it off). */
  readonly sampledInputs?: boolean;
  /** MPA per stream: 'random' (default) draws markers and CRC per connection; or fixed. */
  readonly markers?: boolean;
  readonly crc?: boolean;
  /** Per-cycle back-pressure on m_axis, m_cq and the memory ports (default 0.2). */
  readonly backpressure?: number;
  /** Run the integrator's top rnic_top_axil_w<W>: QPs and STags configured through its AXI4-Lite registers. */
  readonly axil?: boolean;
  readonly keepGoing?: boolean;
  /** Where to write the failure captures of the first mismatching QP (qpN-rtl.pcapng, qpN-model.pcapng, sim/cosim/wire-log.ts); none if unset. */
  readonly evidenceDir?: string;
  /** Where to write the transaction traces of both sides (trace.ts); none if unset. */
  readonly traceDir?: string;
  readonly onProgress?: (done: number, total: number) => void;
}

export interface RnicCosimResult extends TopRunResult {
  readonly width: number;
  readonly qps: number;
  readonly streams: number;
  readonly payloadBytes: number;
  readonly errorsHit: Record<string, number>;
  readonly errorsMissed: string[];
  readonly opcodes: Record<string, number>;
  readonly coverage: Record<string, number>;
  /** The trace files (model, RTL) when `traceDir` was given. */
  readonly traces: string[];
}

const MAX_PEER_MULPDU = 8000;
/**
 * Host memory of lane i's connection: address bits 63..57 name the lane (i + 1), so QPs never share
 * an address, and bits 54..12 are drawn per connection, so every address bit of the datapath is 0 and
 * 1 somewhere in a run (a stuck address bit is seen).
 */
const QP_ADDRESS_SHIFT = 57n;
/** Lane i's host addresses: bits 63..57 are i + 1 (so at most ACTIVE_QPS_MAX lanes), the rest random. */
const qpAddressBase = (i: number, r: Prng): bigint => (BigInt(i + 1) << QP_ADDRESS_SHIFT) | (r.u64() & ((1n << 55n) - 1n) & ~0xfffn);
/** QPs with traffic in a run of a top with more QPs than this: a random set over the whole range. */
export const ACTIVE_QPS = 64;
const ACTIVE_QPS_MAX = 126;
/** Responses and Terminates (the responder's queue) vs everything a work request sends. */
export const isResponse = (u: Uint8Array): boolean => {
  const op = u[1]! & 0xf;
  return op === Opcode.READ_RESPONSE || op === Opcode.ATOMIC_RESPONSE || op === Opcode.TERMINATE;
};
const u8eq = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

export type { QpConfig } from './qp-config';
export type { RnicMismatch } from './scoreboard';

/** A TCP segment of the peer's, and for an FPDU's last one what to call when the RTL has taken it. */
interface Segment {
  readonly data: Uint8Array;
  readonly taken?: () => void;
}

/** One QP's connection: its two model endpoints, MPA both ways, and what is still to compare. */
class Lane {
  constructor(
    /** The QP (tid, cfg_qp, wr_qp). */
    readonly q: number,
    /** Its place among the lanes: its range of STag indices and host addresses. */
    readonly index: number,
  ) {}
  peer!: RxPeer;
  /** The previous connection's regions, still registered in the STag table. */
  stale: readonly RtlRegion[] = [];
  cfg!: QpConfig;
  stream = 0;
  ops = 0;
  budget = 0;
  failed = false;
  afterFail = 0;
  rxFramer!: MpaFramer;
  rxDeframer!: MpaDeframer;
  txDeframer!: MpaDeframer;
  txFramer!: MpaFramer;
  expected: { response: Uint8Array[]; request: Uint8Array[] } = { response: [], request: [] };
  /** Every ULPDU the model sent, in its order (for the model's capture). */
  modelOrder: Uint8Array[] = [];
  got = { response: 0, request: 0 };
  modelEvents = 0;
  /** Completion-queue entries of this QP, with the cycle the queue gave each. */
  rtlEvents: { text: string; cycle: number }[] = [];
  sentRtl = 0;
  wrsPosted = 0;
  /** FPDUs the peer has sent on this connection (MPA fencing opens with the first). */
  peerFpdus = 0;
  /** First-FPDU completions of this connection in the RTL's completion queue. */
  firstRtl = 0;
  allowed: { lo: bigint; hi: bigint }[] = [];
  placedNow: { addr: bigint; len: number }[] = [];
  pendingMpaError: number | null = null;
  /** This step's work: peer ULPDUs to feed, side effects. */
  step: { us: Uint8Array[]; fx: StepSideEffects } | null = null;
  log!: WireLog;
  /** The transmit stream's MPA configuration, and where the RTL's next FPDU starts in it (traces). */
  txStream!: MpaStreamConfig;
  txSeq = 0;
  /** Octets the RTL wrote for this QP since its last comparison, with the cycle of each beat (completion order, traces). */
  rtlWrites: { lo: bigint; hi: bigint; cycle: number }[] = [];
}

/**
 * The QPs that carry traffic: every QP of a small top; of a larger one, ACTIVE_QPS of them over the
 * whole range, the first and the last among them (the rest are never configured: they drop what
 * they get, and share nothing with the others).
 */
function activeQps(r: Prng, n: number, count: number): number[] {
  if (n <= count) return Array.from({ length: n }, (_, q) => q);
  const set = new Set([0, n - 1]);
  while (set.size < count) set.add(r.int(1, n - 2));
  return [...set].sort((a, b) => a - b);
}

export function cosimRnic(opts: RnicCosimOptions): RnicCosimResult {
  const W = opts.width;
  const r = prng(opts.seed);
  const module = opts.axil ? `rnic_top_axil_w${W}` : topModuleOf(W, opts.config);
  const bench = RnicBench.open(
    W,
    {
      ...dutSelection(opts),
      ...(opts.mutate && { mutateModule: opts.mutateModule ?? module }),
      ...(opts.config && { config: opts.config }),
      ...(opts.sampledInputs !== undefined && { sampledInputs: opts.sampledInputs }),
    },
    { r, backpressure: opts.backpressure ?? 0.2, noise: true, ...(opts.axil && { axil: true }) },
  );
  bench.reset();
  const { model } = bench;
  const N = bench.qps;
  // The RNIC's STag table: each lane's peer registers its regions in a range of its own.
  const stagDepth = bench.stagDepth;
  const lanes = activeQps(r, N, Math.min(opts.activeQps ?? ACTIVE_QPS, ACTIVE_QPS_MAX)).map((q, i) => new Lane(q, i));
  const laneByQp = new Map(lanes.map((l) => [l.q, l] as const));
  const counts = new RxCounts<RnicMismatch>();
  const { mismatches, violations } = counts;
  const cov = (k: string) => counts.cov(k);
  let streams = 0;
  let fpdusIn = 0;
  let fpdusOut = 0;
  let workRequests = 0;
  let done = 0;
  const faultTurns = new FaultTurns(r);
  let evidenceLane: Lane | null = null;
  // Transaction traces of both sides (trace.ts), when asked for: nothing is built otherwise.
  const traces = opts.traceDir !== undefined ? { model: new TraceLog('model'), rtl: new TraceLog('rtl') } : null;
  const trace = traceRecorder(traces, () => model.cycles);
  /** The model's FPDU for `u`, framed where the RTL's corresponding one starts (as the scoreboard compares them); its length on the wire. */
  const traceModelOut = (l: Lane, u: Uint8Array, seq: number): number => {
    if (!traces) return 0;
    const wire = new MpaFramer({ ...l.txStream, seq }).frame(u).wire;
    trace('model', { t: 'fpdu', qp: l.q, dir: 'out', seq, ...fpduFields(wire, u, l.cfg.crc) });
    return wire.length;
  };
  const timer = bench.timer();

  /** A difference on lane l, at `cycle` (default: now, for something the RTL has not done by now). */
  const miss = (l: Lane, what: string, expected: string, actual: string, more: { side?: string; cycle?: number; write?: RnicMismatch['write'] } = {}) => {
    evidenceLane ??= l;
    const cycle = more.cycle ?? model.cycles;
    mismatches.add({ qp: l.q, stream: l.stream, op: l.ops, cycle, what, expected, actual, ...(more.side ? { sideBySide: more.side } : {}), ...(more.write !== undefined && { write: more.write }) });
  };
  const violate = (l: Lane, s: string) => {
    evidenceLane ??= l;
    violations.add(`QP ${l.q} stream ${l.stream} op ${l.ops}: ${s}`);
  };

  /** The STag indices of lane q's regions in the table the QPs share: a range of its own. */
  const stagIndicesOf = (i: number) => {
    const count = Math.floor((stagDepth - 1) / lanes.length);
    return { first: 1 + i * count, count };
  };
  /** A new connection on lane l: model endpoints, configuration, STag table, memory. */
  const start = (l: Lane) => {
    streams++;
    // The old connection's regions stay in the shared table until deregistered (programStags).
    l.stale = l.peer?.regions ?? [];
    l.stream = streams;
    const peerMulpdu = r.pick([100, 300, 1460, 4110, MAX_PEER_MULPDU]);
    /** One MPA direction: S0 anywhere in sequence space, the stream starting up to 3000 words in. */
    const direction = (markers: boolean) => {
      const s0 = r.u32();
      return { s0, seq: (s0 + 4 * r.int(0, 3000)) >>> 0, markers };
    };
    const cfg: QpConfig = {
      pd: r.int(0, 0xfffe),
      // Now and then an IRD above the IRRQ's entries: the IRRQ fills and the receive side
      // waits for room (ddp_rx_ctl's post_stall) where a smaller IRD would fail the request.
      ird: r.bool(0.2) ? r.int(bench.irrqDepth + 1, 2 * bench.irrqDepth) : r.int(1, Math.min(6, bench.irrqDepth)),
      ord: IRD_ORD_NO_NEGOTIATE, // the model's local endpoint is never short of ORD either (rx-peer.ts)
      msn: r.bool(0.3) ? (0x1_0000_0000 - r.int(1, 4)) >>> 0 : 1,
      // 64..69, the smallest the RTL takes, splits an Atomic Request (70 octets) with 46..51
      // octets of its header in the first ULPDU (ddp-tx-ulpdu.ts, the tail's octet select).
      mulpdu: r.pick([r.int(64, 69), 100, 200, 1460, 4110, 9000]),
      // Now and then a limit the peer's larger ULPDUs exceed: LLP error 0x03 before the CRC.
      maxUlpdu: r.bool(0.15) ? r.int(UNTAGGED_HEADER_SIZE, peerMulpdu + 64) : MAX_ULPDU_LENGTH,
      bigEndian: r.bool(),
      rfc7306: r.bool(0.85),
      crc: opts.crc ?? r.bool(0.8),
      // Each side asks for markers in what it receives: one direction may have them, the other not.
      rx: direction(opts.markers ?? r.bool(0.6)),
      tx: direction(opts.markers ?? r.bool(0.6)),
      // The responder's MPA fencing (RFC 6581 §3): the RTL holds what it sends until the peer's first FPDU.
      fence: r.bool(0.25),
    };
    if (cfg.msn !== 1) cov('msn-near-wrap');
    cov(`mpa markers rx=${cfg.rx.markers ? 1 : 0} tx=${cfg.tx.markers ? 1 : 0} crc=${cfg.crc ? 1 : 0}`);
    if (cfg.maxUlpdu < MAX_ULPDU_LENGTH) cov('maxUlpduLength below 65535');
    if (!cfg.rfc7306) cov('RFC 7306 off');
    if (cfg.fence) cov('MPA fencing');
    l.cfg = cfg;
    l.peer = new RxPeer(r, { pd: cfg.pd, ird: cfg.ird, initialMsn: cfg.msn, peerMulpdu, localMulpdu: cfg.mulpdu, bigEndian: cfg.bigEndian, rfc7306: cfg.rfc7306, stagDepth, stagIndices: stagIndicesOf(l.index), addressBase: qpAddressBase(l.index, r) });
    l.peer.holdOutput = !!cfg.fence;
    const { rx, tx } = qpStreams(cfg);
    l.rxFramer = new MpaFramer(rx);
    l.rxDeframer = new MpaDeframer(rx);
    l.txFramer = new MpaFramer(tx);
    l.txDeframer = new MpaDeframer(tx);
    l.log = new WireLog({ startup: qpStartup(cfg), rx, tx, cycle: model.cycles });
    l.txStream = tx;
    l.txSeq = cfg.tx.seq;
    l.rtlWrites = [];
    l.expected = { response: [], request: [] };
    l.modelOrder = [];
    l.got = { response: 0, request: 0 };
    l.modelEvents = 0;
    l.rtlEvents = [];
    l.sentRtl = 0;
    l.wrsPosted = 0;
    l.peerFpdus = 0;
    l.firstRtl = 0;
    l.allowed = [];
    l.placedNow = [];
    l.failed = false;
    l.afterFail = 0;
    l.ops = 0;
    l.budget = r.int(1, 60);
    l.pendingMpaError = null;
    bench.cfg.push({ qp: l.q, c: cfg });
  };
  /** Lane l's STags in the RNIC's table, after its configuration: the old connection's out, the new one's in. */
  const programStags = (l: Lane) => {
    bench.stagCfg.push(...l.stale.map((g) => ({ ...g, enable: false })));
    for (const g of l.peer.regions) {
      bench.stagCfg.push(g);
      bench.mem.memory.write(g.base, l.peer.localRnic.memory.read(g.base, Number(g.length)));
    }
  };
  const startAll = (ls: readonly Lane[], what: string) => {
    for (const l of ls) start(l);
    bench.settle(what);
    for (const l of ls) programStags(l);
    bench.settle(`programming the STag table (${what})`);
  };

  /** Writable memory of lane l's stream: its PD's regions with a write right, and posted buffers. */
  const writable = (l: Lane, a: bigint) =>
    l.peer.regions.some((g) => g.pd === l.cfg.pd && (g.access.includes('remote-write') || g.access.includes('local-write') || g.access.includes('remote-atomic')) && a >= g.base && a < g.base + g.length) ||
    l.peer.ranges.some((b) => a >= b.addr && a < b.addr + BigInt(b.len) && !l.peer.regions.some((g) => g.base === b.addr));
  const laneOf = (a: bigint): Lane | undefined => lanes[Number(a >> QP_ADDRESS_SHIFT) - 1];

  /** The model side of lane l takes what the local endpoint sent: expected per class, and to the peer. */
  const expectSent = (l: Lane, us: readonly Uint8Array[]) => {
    for (const u of us) (isResponse(u) ? l.expected.response : l.expected.request).push(u);
    l.modelOrder.push(...us);
  };
  const pullModel = (l: Lane) => {
    if (l.peer.holdOutput) return;
    const before = l.peer.localEvents.length;
    const outs = l.peer.local.pull();
    for (const e of l.peer.localEvents.slice(before)) answered.add(e);
    for (const o of outs) o.onSent?.();
    expectSent(l, outs.map((o) => o.ulpdu));
    l.peer.deliverToPeer(outs.map((o) => o.ulpdu));
  };

  /**
   * What the model's local side did answering its IRRQ (pull: the Atomic write-back): no message
   * it received placed that, so no completion waits for it (RFC 5040 §5.5 rule 9, RFC 7306 §5).
   */
  const answered = new WeakSet<RnicEvent>();

  // Every FPDU the RTL sent, by QP (m_axis tid), deframed and compared as it comes.
  const drainTx = () => {
    for (;;) {
      const f = bench.mAxis.recv();
      if (!f) break;
      fpdusOut++;
      const l = laneByQp.get(f.tid);
      if (!l) throw new Error(`internal: m_axis_tid ${f.tid} names no QP`);
      l.log.out(f.data, f.cycle);
      if (l.cfg.fence && l.peerFpdus === 0) miss(l, 'MPA fencing (RFC 6581 §3)', 'nothing sent before the peer\u2019s first FPDU', `an FPDU: ${hex(f.data.subarray(0, 16))}`, { cycle: f.cycle });
      const ulpdus: Uint8Array[] = [];
      for (const e of l.txDeframer.push(f.data)) {
        if (e.kind === 'fpdu') ulpdus.push(e.ulpdu);
        else miss(l, 'an FPDU the RTL sent', 'a valid FPDU', `MPA error 0x${e.code.toString(16)} (${e.kind}) on ${hex(f.data.subarray(0, 32))}`, { cycle: f.cycle });
      }
      const seq = l.txSeq;
      l.txSeq = (l.txSeq + f.data.length) >>> 0;
      trace('rtl', { t: 'fpdu', qp: l.q, dir: 'out', seq, ...fpduFields(f.data, ulpdus.length === 1 ? ulpdus[0]! : null, l.cfg.crc), cycle: f.cycle ?? model.cycles });
      if (ulpdus.length !== 1) {
        if (ulpdus.length > 1 || mismatches.count === 0) miss(l, 'm_axis packet', 'one FPDU per packet', `${ulpdus.length} FPDUs in ${f.data.length} octets`, { cycle: f.cycle });
        continue;
      }
      const u = ulpdus[0]!;
      const want = l.txFramer.frame(u).wire;
      if (!u8eq(want, f.data)) miss(l, 'FPDU framing', hex(want.subarray(0, 48)), hex(f.data.subarray(0, 48)), { cycle: f.cycle });
      const cls = isResponse(u) ? 'response' : 'request';
      const exp = l.expected[cls][l.got[cls]];
      if (exp) traceModelOut(l, exp, seq);
      const name = OPCODE_NAMES[u[1]! & 0xf] ?? 'undefined opcode';
      counts.opcode(`sent ${name}`);
      if (!exp) miss(l, `${cls} ULPDU ${l.got[cls]} (${name})`, '(none)', describeUlpdu(u), { cycle: f.cycle });
      else if (!u8eq(exp, u)) miss(l, `${cls} ULPDU ${l.got[cls]}`, describeUlpdu(exp), describeUlpdu(u), { side: sideBySide(exp, u), cycle: f.cycle });
      l.got[cls]++;
    }
  };

  const drainCq = () => {
    for (const e of bench.cq.splice(0)) {
      const l = laneByQp.get(e.qp);
      if (!l) throw new Error(`internal: a completion of QP ${e.qp}, which has no traffic`);
      if (e.sent) l.sentRtl++;
      else if (e.first) {
        l.firstRtl++;
        trace('rtl', { t: 'first', qp: l.q, cycle: e.cycle });
        if (!l.cfg.fence || l.peerFpdus === 0 || l.firstRtl > 1) miss(l, 'first-FPDU completion', l.cfg.fence ? 'one, after the peer\u2019s first FPDU' : 'none (the QP is not fenced)', `entry ${l.firstRtl} after ${l.peerFpdus} FPDUs`, { cycle: e.cycle });
      } else {
        l.rtlEvents.push({ text: e.text, cycle: e.cycle });
        trace('rtl', { t: 'completion', qp: l.q, entry: e.text, cycle: e.cycle });
      }
    }
  };

  /** Compares lane l: events, memory, protection (the FPDUs are compared as they come). */
  const compare = (l: Lane, whole = false) => {
    const events = l.peer.localEvents.splice(0);
    const mine = events.map(modelEvent);
    for (const e of events) {
      if (e.type === 'placement') {
        l.allowed.push({ lo: e.address, hi: e.address + BigInt(e.length) });
        l.placedNow.push({ addr: e.address, len: e.length });
      }
      if (e.type === 'terminate-sent') {
        counts.error(e.name);
        l.failed = true;
      }
      if (e.type === 'terminate-received' || e.type === 'closed') {
        cov(e.type);
        l.failed = true;
      }
      if (e.type === 'completion' && e.status === 'success') cov(`completion ${e.kind}`);
    }
    const expected = mine.filter((x): x is string => x !== null);
    if (traces) {
      for (const entry of expected) trace('model', { t: 'completion', qp: l.q, entry });
      const placed = (side: 'model' | 'rtl', spans: readonly { lo: bigint; hi: bigint; cycle?: number }[], read: (a: bigint, n: number) => Uint8Array) => {
        for (const rec of placementRecords(l.q, spans, read, side === 'rtl')) trace(side, rec);
      };
      placed('model', l.placedNow.map((p) => ({ lo: p.addr, hi: p.addr + BigInt(p.len) - 1n })), (a, n) => l.peer.localRnic.memory.read(a, n));
      placed('rtl', l.rtlWrites, (a, n) => bench.mem.memory.read(a, n));
    }
    for (let i = 0; i < expected.length; i++) {
      const got = l.rtlEvents[l.modelEvents + i];
      if (got?.text !== expected[i]) miss(l, `completion-queue entry ${l.modelEvents + i}`, expected[i]!, got?.text ?? '(none)', got ? { cycle: got.cycle } : {});
    }
    completionOrder(l, events, mine);
    l.modelEvents += expected.length;
    counts.events += expected.length;
    const extra = l.rtlEvents[l.modelEvents];
    if (extra) miss(l, `completion-queue entry ${l.modelEvents}`, '(none)', extra.text, { cycle: extra.cycle });
    // What the model placed in this step; at the end of a stream every region, receive buffer and source.
    const d = firstMemoryDifference(whole ? l.peer.ranges : l.placedNow, (a, n) => l.peer.localRnic.memory.read(a, n), (a, n) => bench.mem.memory.read(a, n), bench.mem.writes, W);
    if (d) {
      const mm = memoryMismatch(d, 'memory', model.cycles);
      miss(l, mm.what, mm.expected, mm.actual, { cycle: mm.cycle, write: mm.write ?? null });
    }
    l.placedNow = [];
    l.rtlWrites = [];
  };

  /**
   * Completion order: each completion that says data has landed (a Send's or an Immediate Data's
   * receive completion, a Read's, an Atomic's; not Terminates or closure) comes at a cycle no
   * earlier than the last RTL write of what the model placed before it on this QP in this step:
   * its own message's data and every earlier message's (RFC 5041 §5.3–5.4, RFC 5040 §5.5 rule 4;
   * scoreboard.ts completionBeforeData says why `<=`). The RTL's entry is the one compare pairs
   * with the model's (checked only when the two agree: a different entry is a mismatch already).
   * The RTL has settled since, so every write of the step is in l.rtlWrites (behind the AXI4
   * adapter, its W beats: that a completion also waits for their B is rnic-axi-mem.test.ts's).
   */
  const completionOrder = (l: Lane, events: readonly RnicEvent[], texts: readonly (string | null)[]) => {
    let placed: { addr: bigint; len: number }[] = [];
    let k = l.modelEvents;
    for (const [i, e] of events.entries()) {
      if (e.type === 'placement' && !answered.has(e)) placed.push({ addr: e.address, len: e.length });
      const text = texts[i];
      if (text === null || text === undefined) continue;
      const got = l.rtlEvents[k++];
      if (e.type !== 'completion' || got?.text !== text || !placed.length) continue;
      const early = completionBeforeData(placed, l.rtlWrites, got.cycle);
      cov('completion order checked');
      if (early) {
        miss(l, `completion-queue entry ${k - 1} before its data (RFC 5041 §5.3-5.4, RFC 5040 §5.5)`,
          `${text} once the data placed before it is written: at cycle ${early.lastWrite} or later`,
          `${text} at cycle ${got.cycle}; octet 0x${early.addr.toString(16)} written after it, the last write at cycle ${early.lastWrite}`,
          { cycle: got.cycle });
      }
      // The first completion after a placement is the earliest that must wait for it.
      placed = [];
    }
  };

  let checkedWrites = 0;
  /** Protection: every octet the RTL wrote lies in a placement of its QP's model, in writable memory. */
  const checkWrites = () => {
    for (; checkedWrites < bench.mem.writes.length; checkedWrites++) {
      const w = bench.mem.writes[checkedWrites]!;
      let lo = -1;
      let hi = -1;
      for (let j = 0; j < W; j++) if ((w.strb >> BigInt(j)) & 1n) (lo < 0 && (lo = j), (hi = j));
      const a0 = w.addr + BigInt(lo);
      const a1 = w.addr + BigInt(hi);
      const l = laneOf(a0);
      if (!l || laneOf(a1) !== l) {
        violations.add(`a write of 0x${a0.toString(16)}..0x${a1.toString(16)}, outside every QP's memory`);
        continue;
      }
      l.rtlWrites.push({ lo: a0, hi: a1, cycle: w.cycle });
      // Placements the model makes in this settle are compared after it: check against them then.
      if (!l.allowed.some((p) => a0 >= p.lo && a1 < p.hi) && !l.peer.localEvents.some((e) => e.type === 'placement' && a0 >= e.address && a1 < e.address + BigInt(e.length))) {
        violate(l, `write of octets 0x${a0.toString(16)}..0x${a1.toString(16)} outside every placement of the model`);
      } else if (!writable(l, a0) || !writable(l, a1)) violate(l, `write of 0x${a0.toString(16)}..0x${a1.toString(16)} outside the stream's writable memory`);
    }
    for (const f of bench.mem.faults.splice(0)) violations.add(`memory port: ${f}`);
    for (const b of bench.broken.splice(0)) violations.add(b);
  };

  /**
   * The end of lane l's stream: it sent every ULPDU the model did (fenced with no FPDU from its
   * peer, none: MPA fencing holds them until the new connection drops them); a fenced QP the
   * peer spoke to reported its first FPDU once. True when the fence held everything.
   */
  const finish = (l: Lane): boolean => {
    const held = l.peer.holdOutput;
    if (held) cov('MPA fencing held a whole stream');
    // Held, the model has sent nothing either: none expected.
    for (const cls of ['response', 'request'] as const) if (l.got[cls] !== l.expected[cls].length) miss(l, `${cls} ULPDU count`, String(l.expected[cls].length), String(l.got[cls]));
    // In the model's trace, what it sent that the RTL did not (framed on from where the RTL stopped).
    for (const cls of ['response', 'request'] as const) {
      for (const u of l.expected[cls].slice(l.got[cls])) l.txSeq = (l.txSeq + traceModelOut(l, u, l.txSeq)) >>> 0;
    }
    if (l.cfg.fence && !held && l.firstRtl !== 1) miss(l, 'first-FPDU completions', '1', String(l.firstRtl));
    return held;
  };

  /** Queues lane l's peer ULPDUs as FPDUs in random TCP segments; returns what the model's MPA delivers. */
  const framePeer = (l: Lane, us: readonly Uint8Array[], mpaError: number | null): { segments: Segment[]; sees: ({ ulpdu: Uint8Array } | { error: number })[] } => {
    const segments: Segment[] = [];
    const sees: ({ ulpdu: Uint8Array } | { error: number })[] = [];
    for (const [i, u] of us.entries()) {
      const name = opcodeName(u);
      counts.opcode(name);
      counts.payloadBytes += taggedPayload(u);
      const seq = l.rxFramer.seq;
      const f = l.rxFramer.frame(u);
      fpdusIn++;
      l.peerFpdus++;
      if (l.cfg.fence && l.peerFpdus === 1) trace('model', { t: 'first', qp: l.q });
      const wire = faultyWire(f, i === 0 ? mpaError : null, l.cfg.crc, r);
      trace('both', { t: 'fpdu', qp: l.q, dir: 'in', seq, ...fpduFields(wire, u, l.cfg.crc) });
      for (const e of l.rxDeframer.push(wire)) sees.push(e.kind === 'fpdu' ? { ulpdu: e.ulpdu } : { error: e.code });
      const taken = l.log.in(wire);
      const segs = tcpSegments(wire, r, W);
      // The capture's time of the FPDU: when its last segment went in.
      segments.push(...segs.map((data, j) => ({ data, ...(j === segs.length - 1 && { taken: () => taken(model.cycles) }) })));
    }
    return { segments, sees };
  };

  startAll(lanes, 'configuring every QP');

  const clean = () => counts.clean;
  while (done < opts.ops && (opts.keepGoing || clean())) {
    // This step's QPs: one, or several interleaved.
    const order = lanes.slice();
    for (let i = order.length - 1; i > 0; i--) {
      const j = r.int(0, i);
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    const active = order.slice(0, r.bool(0.5) ? 1 : r.int(1, order.length));
    let blockTx = false;
    for (const l of active) {
      if (done >= opts.ops) break;
      done++;
      opts.onProgress?.(done, opts.ops);
      l.ops++;
      const fx = newSideEffects();
      const maxLen = Math.min(l.peer.opts.peerMulpdu * 3, 20000);
      let us: Uint8Array[] | null = null;
      // A fenced QP its peer has not spoken to yet keeps its work requests: post no more than the
      // requester takes of one QP (its ring, rnic_top's wr_room), or the shared work-request port
      // would wait on it for good.
      const room = l.peer.holdOutput ? DDP_TX_RING - l.wrsPosted : Infinity;
      if (!l.failed && r.bool(opts.faults)) {
        fx.burst = false;
        const kind = faultTurns.next();
        // The IRD overflow needs m_axis held, which stalls every QP: only in a step of its own. With
        // an IRD above the IRRQ's depth the IRRQ fills first and the receive side waits for room
        // that a held m_axis never makes: no overflow to provoke.
        const noIrd = active.length > 1 || l.cfg.ird > bench.irrqDepth;
        us = kind === 'ird' && noIrd ? null : l.peer.fault(kind, fx, maxLen);
        if (us) cov(`fault ${kind}`);
      }
      if (!us && !l.failed && room > 0 && r.bool(0.3)) {
        // Now and then more work requests than the QP's queue holds: its wr_ready falls while
        // the other QPs' stay high, and the port must hold the next one for it.
        const n = Math.min(room, r.bool(0.1) ? r.int(2, 8) : 1);
        for (let i = 0; i < n; i++) l.peer.localSend(fx, Math.min(l.cfg.mulpdu * 3, 20000));
        if (n > 1) cov('a burst of work requests on one QP');
        us = [];
      }
      us ??= l.peer.valid(fx, maxLen);
      // Held, one ULPDU at a time: the fence opens on the first, and the model must send what it
      // kept before it takes the second (whose error would drop it).
      if (l.peer.holdOutput) fx.burst = false;
      l.step = { us, fx };
      // RNIC_DEBUG=1: one line per operation on stderr, to find the one a mismatch report names.
      if (process.env.RNIC_DEBUG) console.error(`QP ${l.q} stream ${l.stream} op ${l.ops}: ${fx.wrs.map((w) => `wr ${w.wr.kind}`).join(' ')} peer ${us.map((u) => OPCODE_NAMES[u[1]! & 0xf] ?? '?').join(', ')}${fx.burst ? '' : ' (fault)'}${fx.inject ? ' inject' : ''}${fx.abort ? ' abort' : ''}${fx.mpaError !== null ? ` mpa ${fx.mpaError}` : ''}${l.peer.holdOutput ? ' held' : ''} irrq ${bench.irrqUsed(l.q)}`);
      blockTx ||= fx.blockTx;
    }
    const stepping = active.filter((l) => l.step);

    // Phase 1: receive buffers, work requests, local faults; the RTL sends its requests.
    for (const l of stepping) {
      const { fx } = l.step!;
      for (const b of fx.recv) {
        bench.recv.push({ qp: l.q, ...b });
        bench.mem.memory.write(b.addr, l.peer.localRnic.memory.read(b.addr, b.len));
      }
      for (const w of fx.wrs) {
        if (w.addr) bench.mem.memory.write(w.addr, l.peer.localRnic.memory.read(w.addr, w.wr.kind === 'write' || w.wr.kind === 'send' ? w.wr.data.length : 0));
        bench.post(l.q, w);
        l.wrsPosted++;
        workRequests++;
        cov(`work request ${w.wr.kind}`);
      }
      expectSent(l, fx.localSent);
      if (fx.inject) {
        const e = RdmapError.GLOBAL_CATASTROPHIC;
        l.peer.local.injectFailure(e);
        bench.injectNext(l.q, Number(errBits(e)));
      }
    }
    if (stepping.some((l) => l.step!.fx.wrs.length)) {
      bench.settle('work requests');
      drainTx();
      drainCq();
    }
    for (const l of stepping) {
      if (!l.step!.fx.abort) continue;
      bench.abort(l.q);
      l.peer.local.abort('the ULP aborts');
      bench.settle('abort');
      pullModel(l);
    }

    // Phase 2: the peers' FPDUs, interleaved by TCP segment across the QPs. A valid message goes
    // in whole; a fault one ULPDU at a time, the RTL settling in between (the model's endpoint
    // answers Read Requests only when the RTL has: the IRD fault depends on it).
    if (blockTx) bench.blockTx(true);
    const rounds = Math.max(0, ...stepping.map((l) => (l.step!.fx.burst ? 1 : l.step!.us.length)));
    for (let k = 0; k < rounds; k++) {
      const fed: { l: Lane; sees: ({ ulpdu: Uint8Array } | { error: number })[] }[] = [];
      const queues: { q: number; segs: Segment[] }[] = [];
      for (const l of stepping) {
        const { us, fx } = l.step!;
        const now = fx.burst ? (k === 0 ? us : []) : us.slice(k, k + 1);
        if (!now.length) continue;
        const { segments, sees } = framePeer(l, now, k === 0 ? fx.mpaError : null);
        if (now.length > 1) cov('back-to-back ULPDUs');
        fed.push({ l, sees });
        queues.push({ q: l.q, segs: segments });
      }
      if (queues.length > 1) cov('QPs interleaved on s_axis');
      while (queues.some((x) => x.segs.length)) {
        const x = r.pick(queues.filter((y) => y.segs.length));
        const seg = x.segs.shift()!;
        bench.sAxis.send(seg.data, { tid: x.q }, seg.taken);
      }
      bench.settle('the peers\u2019 FPDUs');
      for (const { l, sees } of fed) {
        for (const s of sees) {
          if ('ulpdu' in s) l.peer.local.receive(s.ulpdu);
          else l.peer.local.llpError(s.error, 'MPA failed the FPDU');
        }
        // MPA fencing opens with the first FPDU: the model's local side sends what it kept.
        if (sees.length) l.peer.holdOutput = false;
        if (bench.irrqUsed(l.q) === 0) pullModel(l);
      }
    }
    if (blockTx) {
      bench.blockTx(false);
      bench.settle('unblocking m_axis');
    }
    for (const l of stepping) if (bench.irrqUsed(l.q) === 0) pullModel(l);
    drainTx();
    drainCq();
    checkWrites();
    for (const l of stepping) compare(l);

    // Streams that are over: final checks, and a new connection on the QP.
    const restart: Lane[] = [];
    for (const l of stepping) {
      l.step = null;
      if (l.failed) l.afterFail++;
      if (l.afterFail > 2 || l.ops >= l.budget) restart.push(l);
    }
    if (restart.length) {
      bench.settle('the end of the streams');
      for (const l of restart) if (bench.irrqUsed(l.q) === 0) pullModel(l);
      drainTx();
      drainCq();
      checkWrites();
      const again: Lane[] = [];
      for (const l of restart) {
        compare(l, true);
        const held = finish(l);
        if (l.rtlEvents.length !== l.modelEvents) miss(l, 'completion-queue entry count', String(l.modelEvents), String(l.rtlEvents.length));
        // Work requests are all sent unless the stream ended first (then the rest are dropped), or
        // a fenced QP never heard from its peer (then none has left).
        const sent = held ? 0 : l.wrsPosted;
        if (!l.failed && l.sentRtl !== sent) miss(l, 'sent completions', String(sent), String(l.sentRtl));
        if (mismatches.count > 0 && !opts.keepGoing) break;
        again.push(l);
      }
      if (clean() || opts.keepGoing) startAll(again, 'new connections');
    }
  }
  // The streams still open: everything compared to the end.
  if (clean() || opts.keepGoing) {
    bench.settle('the end of the run');
    for (const l of lanes) if (bench.irrqUsed(l.q) === 0) pullModel(l);
    drainTx();
    drainCq();
    checkWrites();
    for (const l of lanes) {
      compare(l, true);
      finish(l);
    }
  }
  const time = timer.stop();
  bench.close();
  const traceFiles = traces && opts.traceDir !== undefined ? writeTraces(opts.traceDir, `${module}-seed${opts.seed}`, { module, seed: opts.seed }, traces) : [];
  const evidence: string[] = [];
  if (opts.evidenceDir && evidenceLane) {
    const l = evidenceLane as Lane;
    evidence.push(...l.log.write(opts.evidenceDir, `qp${l.q}`, l.modelOrder, mismatches.first?.qp === l.q ? mismatches.first : undefined));
  }
  return {
    dut: 'rnic',
    module,
    width: W,
    qps: N,
    seed: opts.seed,
    ops: done,
    packets: fpdusIn + fpdusOut,
    fpdusIn,
    fpdusOut,
    workRequests,
    streams,
    events: counts.events,
    payloadBytes: counts.payloadBytes,
    ...counts.result(),
    cycles: time.cycles,
    simCyclesPerSecond: time.simCyclesPerSecond,
    evidence,
    traces: traceFiles,
  };
}

