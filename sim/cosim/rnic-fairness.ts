import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { MpaDeframer, MpaFramer } from '../../ts-model/mpa';
import { encodeReadRequest } from '../../ts-model/rdmap/headers';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import { BackgroundMemory } from '../harness/memory';
import type { DutSelection } from '../harness/open-dut';
import { ddpTxWrQueue } from '../../hdl-gen/blocks/ddp-tx';
import { expectedUlpdus } from './ddp-tx';
import { isResponse } from './rnic';
import { RnicBench, openTop } from './rnic-bench';
import { INITIAL_MSN, PD, S0, qpConfig, rxSeq, txSeq } from './rnic-rate';
import type { RtlRegion } from './rx-peer';
import { describeUlpdu } from './ulpdu-text';
import type { TxRequest } from './wr-request';

/**
 * Fairness of `rnic_top_w<W>`'s arbiters (hdl-gen/lib/arbiter.ts, ddp-tx-sched.ts): the two
 * sources sharing mpa_tx (a grant per FPDU: the responder and the requester, each serving every
 * QP), the QPs sharing the requester (a turn per work request: its scheduler switches QPs at
 * message boundaries), the QPs sharing the responder (its IRRQ: requests in arrival order), and
 * the readers sharing the host memory read port (a grant per beat).
 *
 * Every QP is made busy on both queues at once: two RDMA Writes of a few KiB posted as work
 * requests, and an RDMA Read Request of a few KiB from the peer, with small segments (MULPDU 200),
 * no back-pressure and host memory reads answered at a fixed latency. The per-stream scoreboards
 * see nothing when an arbiter serves the same source again and again (every stream keeps its
 * content and order); here the order across streams is checked:
 * - sources on m_axis: once a source is ready, while it has FPDUs left to send, at most one FPDU
 *   of the other passes between two of its own;
 * - QPs in the responder: the Read Responses go whole, in the order their Read Requests arrived;
 * - QPs in the requester: once every QP's work requests are in its scheduler (and past the Writes
 *   it had already decided), while a QP has Writes left, at most one Write of each other busy QP
 *   starts between two of its own;
 * - in time: a ready source's FPDUs follow each other within one turn of every source.
 * And every FPDU is the model's: each QP's ULPDUs, per queue, equal the model's Writes and Read
 * Response octet for octet (the random co-simulation checks everything else).
 */

export interface FairnessOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
}

export interface FairnessMismatch {
  readonly cycle: number;
  readonly qp: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
}

export interface FairnessResult {
  readonly dut: 'rnic_fairness';
  readonly module: string;
  readonly width: number;
  readonly qps: number;
  /** The QPs given work (all of a small top; BUSY_QPS of a larger one, its first and last among them). */
  readonly busy: readonly number[];
  readonly seed: number;
  readonly fpdus: number;
  readonly cycles: number;
  /** Differences from the model and arbiters that failed to rotate. */
  readonly mismatches: number;
  readonly firstMismatch: FairnessMismatch | null;
}

const MULPDU = 200;
/** At most this many QPs get work: the arbiters' turns show with a few, and a round stays short. */
const BUSY_QPS = 8;

/** The QPs of a top of `qps` that get work: every one, or BUSY_QPS spread over the range (first and last among them). */
function busyQps(r: Prng, qps: number): number[] {
  if (qps <= BUSY_QPS) return Array.from({ length: qps }, (_, q) => q);
  const set = new Set([0, qps - 1]);
  while (set.size < BUSY_QPS) set.add(r.int(1, qps - 2));
  return [...set].sort((a, b) => a - b);
}

/** The responder's Read source of the i-th busy QP: zero-based, its own STag (index 0x10 + i, key 0x5a). */
const READ_BASE = 0x3000_0000n;
const readStag = (i: number): number => (((0x10 + i) << 8) | 0x5a) >>> 0;
const READ_SINK_STAG = 0x7700_0001;

/**
 * The first place where a source with items left waited longer than `bound` items of others:
 * `seq` is the source of each item in order; a source's wait starts at `from(source)` (its index
 * in seq, or 0).
 */
export function firstStarved(seq: readonly number[], totals: ReadonlyMap<number, number>, bound: number, from: (s: number) => number = () => 0): { at: number; source: number; waited: number } | null {
  const sent = new Map<number, number>();
  const lastAt = new Map<number, number>();
  for (let i = 0; i < seq.length; i++) {
    for (const [s, total] of totals) {
      if ((sent.get(s) ?? 0) >= total || i < from(s)) continue;
      const since = lastAt.has(s) ? lastAt.get(s)! + 1 : from(s);
      const waited = i - since;
      if (seq[i] !== s && waited + 1 > bound) return { at: i, source: s, waited: waited + 1 };
    }
    sent.set(seq[i]!, (sent.get(seq[i]!) ?? 0) + 1);
    lastAt.set(seq[i]!, i);
  }
  return null;
}

/** MPA's length field, CRC, pad and markers around a ULPDU, at most (RFC 5044 §4, §5). */
const FPDU_OVERHEAD = 2 + 3 + 4 + 4 * 2;
/**
 * Cycles between two FPDUs the arbiters may add: a stage's bubble, a grant's turn-around, and at a
 * message boundary of the requester the next message's first reads, which share the read port
 * (a beat per reader in turn) with every responder's (184 cycles seen for 180 at 8).
 */
const TURN_SLACK = 16;
/** A queue counts as ready this many cycles after its work was handed over (the pipeline's latency, with room). */
const READY_AFTER = 64;

export function cosimRnicFairness(opts: FairnessOptions): FairnessResult {
  const W = opts.width;
  const r = prng(opts.seed);
  const model = openTop(W, opts);
  const background = new BackgroundMemory();
  const bench = new RnicBench(model, { r, measure: true, memory: { background, latency: 4 } });
  const qps = bench.qps;
  const busyAll = busyQps(r, qps);
  const mismatches: FairnessMismatch[] = [];
  const miss = (m: FairnessMismatch) => mismatches.push(m);
  const c = { mulpdu: MULPDU, markers: r.bool(), crc: true };
  const stride = 0x10000n;
  const regions = busyAll.map((q, i) => ({ stag: readStag(i), pd: PD, base: READ_BASE + BigInt(q) * stride, length: stride, access: ['remote-read'], va: false, invalidatable: false }) satisfies RtlRegion);
  let fpdus = 0;

  /** One round: the `busy` QPs each get two Writes and a Read Request at once; then the checks. */
  const round = (busy: readonly number[]) => {
    const writes: { qp: number; req: TxRequest & { kind: 'write' } }[] = [];
    const reads = new Map<number, { len: number; to: bigint; wire: Uint8Array }>();
    for (const q of busy) {
      for (let k = 0; k < 2; k++) {
        const i = BigInt(q * 2 + k);
        writes.push({ qp: q, req: { kind: 'write', stag: 0x5100 + q, to: i * stride, addr: 0x2000_0000n + i * stride + BigInt(r.int(0, W - 1)), len: r.int(1500, 3000) } });
      }
      const len = r.int(3000, 6000);
      const to = BigInt(r.int(0, 4096));
      const payload = encodeReadRequest({ sinkStag: READ_SINK_STAG, sinkTo: 0n, size: len, srcStag: readStag(busyAll.indexOf(q)), srcTo: to });
      const [ulpdu] = segmentMessage({ tagged: false, rsvdUlp: rdmapControl(Opcode.READ_REQUEST), rsvdUlp2: 0, qn: 1, msn: INITIAL_MSN, payload }, MULPDU);
      reads.set(q, { len, to, wire: new MpaFramer({ s0: S0, markers: c.markers, crc: c.crc, seq: rxSeq(q) }).frame(ulpdu!).wire });
    }
    bench.start(busyAll.map((q) => qpConfig(c, q)), regions);
    bench.mAxis.drain();
    bench.inBeats.length = 0;
    bench.wrAt.length = 0;
    bench.wr.pushAll(writes);
    for (const q of busy) bench.sAxis.send(reads.get(q)!.wire, { tid: q });
    bench.settle(`the Writes and Read Responses of QPs ${busy.join(', ')}`, 2_000_000);
    const cycles = model.cycles;
    // When each queue had its work: the last work request's handshake; the Read Request's last beat.
    const handed = new Map<number, { request: number; response: number }>();
    let beats = 0;
    for (const q of busy) {
      beats += Math.ceil(reads.get(q)!.wire.length / W);
      handed.set(q, { request: Math.max(...bench.wrAt.filter((_, i) => writes[i]!.qp === q)), response: bench.inBeats[beats - 1] ?? 0 });
    }

    const frames = bench.mAxis.drain().map((f) => ({ ...f, cycle: f.cycle ?? cycles }));
    /** Each frame's ULPDU (one FPDU per frame): a response or a request, and whether it ends its message. */
    const kinds = new Map<(typeof frames)[number], { response: boolean; last: boolean }>();
    fpdus += frames.length;
    for (const q of busy) {
      const deframer = new MpaDeframer({ s0: S0, markers: c.markers, crc: c.crc, seq: txSeq(q) });
      const rd = reads.get(q)!;
      const want = {
        request: expectedUlpdus(writes.filter((x) => x.qp === q).map((x) => x.req), background, { mulpdu: MULPDU, initialMsn: INITIAL_MSN }),
        response: segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: READ_SINK_STAG, to: 0n, payload: background.read(READ_BASE + BigInt(q) * stride + rd.to, rd.len) }, MULPDU),
      };
      const got = { request: 0, response: 0 };
      for (const f of frames.filter((x) => x.tid === q)) {
        for (const e of deframer.push(f.data)) {
          if (e.kind !== 'fpdu') {
            miss({ cycle: f.cycle, qp: q, what: 'an FPDU the RTL sent', expected: 'a valid FPDU', actual: `MPA error 0x${e.code.toString(16)} on ${hex(f.data.subarray(0, 32))}` });
            continue;
          }
          const cls = isResponse(e.ulpdu) ? 'response' : 'request';
          const exp = want[cls][got[cls]];
          if (!exp || Buffer.compare(exp, e.ulpdu) !== 0) miss({ cycle: f.cycle, qp: q, what: `${cls} ULPDU ${got[cls]}`, expected: exp ? describeUlpdu(exp) : '(none)', actual: describeUlpdu(e.ulpdu) });
          got[cls]++;
          // DDP control: L, the message's last segment (RFC 5041 §4.2).
          kinds.set(f, { response: cls === 'response', last: (e.ulpdu[0]! & 0x40) !== 0 });
        }
      }
      for (const cls of ['request', 'response'] as const) if (got[cls] !== want[cls].length) miss({ cycle: cycles, qp: q, what: `${cls} ULPDU count`, expected: String(want[cls].length), actual: String(got[cls]) });
    }

    // The sources on m_axis: the responder (0) and the requester (1); a frame is a response or a
    // request by its ULPDU (one FPDU per frame, sent by an MPA-aware framer).
    const [responder, requester] = [0, 1];
    const tagged = frames.filter((f) => kinds.has(f)).map((f) => ({ ...f, ...kinds.get(f)! }));
    const source = (x: (typeof tagged)[number]) => (x.response ? responder : requester);
    const seq = tagged.map(source);
    const totals = new Map([responder, requester].map((k) => [k, seq.filter((x) => x === k).length] as const));
    const readyCycle = (k: number) => Math.min(...busy.map((q) => (k === requester ? handed.get(q)!.request : handed.get(q)!.response))) + READY_AFTER;
    const readyAt = (k: number) => {
      const i = tagged.findIndex((x) => x.cycle >= readyCycle(k));
      return i < 0 ? tagged.length : i;
    };
    const name = (k: number) => (k === requester ? 'the requester' : 'the responder');
    const t = firstStarved(seq, totals, 1, readyAt);
    if (t) miss({ cycle: tagged[t.at]!.cycle, qp: tagged[t.at]!.tid, what: 'the round-robin on m_axis', expected: `at most 1 FPDU of the other source between two of ${name(t.source)}`, actual: `${t.waited} (sources ${seq.slice(Math.max(0, t.at - 12), t.at + 1).map((k) => (k === requester ? 'W' : 'R')).join(' ')})` });
    // The responder: each QP's Read Response whole, in the order the Read Requests arrived (the
    // order the bench sent them: busy's order).
    const respQps = tagged.filter((x) => x.response).map((x) => x.tid).filter((q, i, a) => i === 0 || a[i - 1] !== q);
    if (respQps.join() !== busy.join()) miss({ cycle: cycles, qp: respQps[0] ?? 0, what: 'the Read Responses in request order, each whole', expected: `QPs ${busy.join(', ')}`, actual: `QPs ${respQps.join(', ')}` });
    // In time: a ready source's FPDUs within one turn of both sources (a reader passed over for
    // the memory read port stalls it).
    const turn = 2 * (Math.ceil((MULPDU + FPDU_OVERHEAD) / W) + TURN_SLACK);
    for (const k of totals.keys()) {
      let prev = readyCycle(k);
      for (const [i, x] of tagged.filter((y) => source(y) === k).entries()) {
        // The first also waits for every pipeline to fill.
        if (x.cycle > prev + turn + (i === 0 ? READY_AFTER : 0)) {
          miss({ cycle: x.cycle, qp: x.tid, what: `the gap between two FPDUs of ${name(k)}`, expected: `at most ${turn} cycles`, actual: `${x.cycle - prev} cycles, from cycle ${prev} to ${x.cycle}` });
          break;
        }
        prev = Math.max(prev, x.cycle);
      }
    }
    // The QPs in the requester, a turn per work request: the QP of each Write's first ULPDU.
    const starts: { qp: number; cycle: number }[] = [];
    let open = false;
    for (const x of tagged.filter((y) => source(y) === requester)) {
      if (!open) starts.push({ qp: x.tid, cycle: x.cycle });
      open = !x.last;
    }
    const msgSeq = starts.map((x) => x.qp);
    const msgTotals = new Map(busy.map((q) => [q, msgSeq.filter((x) => x === q).length] as const));
    // A QP waits from when every busy QP's work requests are in the scheduler, past the Writes
    // already handed to the send queue by then (its scheduler decides that many ahead).
    const allHanded = Math.max(...busy.map((q) => handed.get(q)!.request)) + READY_AFTER;
    const decidedAhead = ddpTxWrQueue(W) + 1;
    const msgReady = () => {
      const i = starts.findIndex((x) => x.cycle >= allHanded);
      return i < 0 ? starts.length : i + decidedAhead;
    };
    const m = firstStarved(msgSeq, msgTotals, busy.length - 1, msgReady);
    if (m) miss({ cycle: starts[m.at]!.cycle, qp: m.source, what: 'the QPs\u2019 turns in the requester', expected: `at most ${busy.length - 1} Writes of other QPs between two of QP ${m.source}`, actual: `${m.waited} (Write QPs ${msgSeq.slice(Math.max(0, m.at - 12), m.at + 1).join(' ')})` });
  };

  let cycles = 0;
  try {
    // Every busy QP at once (the QPs share m_axis and the memory read port), then one alone (its two
    // queues share the whole read port: a queue its arbiter passes over gets no data).
    round(busyAll);
    round([busyAll[r.int(0, busyAll.length - 1)]!]);
    cycles = model.cycles;
  } finally {
    model.close();
  }
  mismatches.sort((a, b) => a.cycle - b.cycle);
  return { dut: 'rnic_fairness', module: `rnic_top_w${W}`, width: W, qps, busy: busyAll, seed: opts.seed, fpdus, cycles, mismatches: mismatches.length, firstMismatch: mismatches[0] ?? null };
}
