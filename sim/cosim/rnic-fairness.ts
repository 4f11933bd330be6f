import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { MpaDeframer, MpaFramer } from '../../ts-model/mpa';
import { encodeReadRequest } from '../../ts-model/rdmap/headers';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { hex } from '../../ts-model/util/hex';
import { prng } from '../../ts-model/util/prng';
import { BackgroundMemory } from '../harness/memory';
import type { DutSelection } from '../harness/open-dut';
import { expectedUlpdus } from './ddp-tx';
import { isResponse } from './rnic';
import { RnicBench, openTop } from './rnic-bench';
import { INITIAL_MSN, PD, S0, qpConfig, rxSeq, txSeq } from './rnic-rate';
import type { RtlRegion } from './rx-peer';
import { describeUlpdu } from './ulpdu-text';
import type { TxRequest } from './wr-request';

/**
 * Fairness of `rnic_top_w<W>`'s round-robin arbiters (hdl-gen/lib/arbiter.ts): the QPs sharing
 * mpa_tx (a grant per FPDU), and inside each QP its two queues, the requester's work requests and
 * the responder's Read Responses, which share the QP's FPDU output (a grant per ULPDU) and its host
 * memory read port (a grant per beat).
 *
 * Every QP is made busy on both queues at once: two RDMA Writes of a few KiB posted as work
 * requests, and an RDMA Read Request of a few KiB from the peer, with small segments (MULPDU 200),
 * no back-pressure and host memory reads answered at a fixed latency. The per-stream scoreboards
 * see nothing when an arbiter serves the same source again and again (every stream keeps its
 * content and order); here the order across streams is checked:
 * - QPs: while a QP has FPDUs left to send, at most `qps − 1` FPDUs of other QPs pass between two
 *   of its own (and before its first);
 * - queues of a QP: once a queue has sent its first ULPDU, while it has ULPDUs left, at most one
 *   ULPDU of the other queue passes between two of its own. (The Read Response starts later than
 *   the Writes: the request must arrive first, so its wait counts from its first ULPDU.)
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
  readonly seed: number;
  readonly fpdus: number;
  readonly cycles: number;
  /** Differences from the model and arbiters that failed to rotate. */
  readonly mismatches: number;
  readonly firstMismatch: FairnessMismatch | null;
}

const MULPDU = 200;
/** The responder's Read source, per QP: zero-based, its own STag (index 0x10 + QP, key 0x5a). */
const READ_BASE = 0x3000_0000n;
const readStag = (qp: number): number => (((0x10 + qp) << 8) | 0x5a) >>> 0;
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
/** Cycles between two FPDUs the arbiters may add (a stage's bubble, a grant's turn-around). */
const TURN_SLACK = 8;
/** A queue counts as ready this many cycles after its work was handed over (the pipeline's latency, with room). */
const READY_AFTER = 64;

export function cosimRnicFairness(opts: FairnessOptions): FairnessResult {
  const W = opts.width;
  const r = prng(opts.seed);
  const model = openTop(W, opts);
  const qps = model.handle('qp_idle').width;
  const background = new BackgroundMemory();
  const bench = new RnicBench(model, { r, measure: true, memory: { background, latency: 4 } });
  const mismatches: FairnessMismatch[] = [];
  const miss = (m: FairnessMismatch) => mismatches.push(m);
  const c = { mulpdu: MULPDU, markers: r.bool(), crc: true };
  const stride = 0x10000n;
  const regions = Array.from({ length: qps }, (_, q) => ({ stag: readStag(q), pd: PD, base: READ_BASE + BigInt(q) * stride, length: stride, access: ['remote-read'], va: false, invalidatable: false }) satisfies RtlRegion);
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
      const payload = encodeReadRequest({ sinkStag: READ_SINK_STAG, sinkTo: 0n, size: len, srcStag: readStag(q), srcTo: to });
      const [ulpdu] = segmentMessage({ tagged: false, rsvdUlp: rdmapControl(Opcode.READ_REQUEST), rsvdUlp2: 0, qn: 1, msn: INITIAL_MSN, payload }, MULPDU);
      reads.set(q, { len, to, wire: new MpaFramer({ s0: S0, markers: c.markers, crc: c.crc, seq: rxSeq(q) }).frame(ulpdu!).wire });
    }
    bench.start(Array.from({ length: qps }, (_, q) => qpConfig(c, q)), regions);
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
    fpdus += frames.length;
    for (const q of busy) {
      const deframer = new MpaDeframer({ s0: S0, markers: c.markers, crc: c.crc, seq: txSeq(q) });
      const rd = reads.get(q)!;
      const want = {
        request: expectedUlpdus(writes.filter((x) => x.qp === q).map((x) => x.req), background, { mulpdu: MULPDU, initialMsn: INITIAL_MSN }),
        response: segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: READ_SINK_STAG, to: 0n, payload: background.read(READ_BASE + BigInt(q) * stride + rd.to, rd.len) }, MULPDU),
      };
      const got = { request: 0, response: 0 };
      // This QP's ULPDUs in order: the queue of each (0 requests, 1 responses) and its cycle.
      const order: { cls: number; cycle: number }[] = [];
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
          order.push({ cls: cls === 'response' ? 1 : 0, cycle: f.cycle });
        }
      }
      for (const cls of ['request', 'response'] as const) if (got[cls] !== want[cls].length) miss({ cycle: cycles, qp: q, what: `${cls} ULPDU count`, expected: String(want[cls].length), actual: String(got[cls]) });
      // The QP's two queues: each waits from READY_AFTER cycles after its work was handed over.
      const seq = order.map((x) => x.cls);
      const totals = new Map([0, 1].map((k) => [k, seq.filter((x) => x === k).length] as const));
      const h = handed.get(q)!;
      const readyAt = (k: number) => {
        const i = order.findIndex((x) => x.cycle >= (k ? h.response : h.request) + READY_AFTER);
        return i < 0 ? order.length : i;
      };
      if (process.env.FAIR_DEBUG) console.error(`QP ${q} ready ${readyAt(0)} ${readyAt(1)} ${order.map((x) => (x.cls ? "R" : "W") + x.cycle).join(" ")}`);
      const t = firstStarved(seq, totals, 1, readyAt);
      // And in time: once both queues are ready, the QP's ULPDUs follow each other within one
      // turn of every busy QP's FPDU (a queue passed over for the memory read port stalls it).
      const turn = busy.length * (Math.ceil((MULPDU + FPDU_OVERHEAD) / W) + TURN_SLACK);
      let prev = Math.max(h.request, h.response) + READY_AFTER;
      for (const [i, x] of order.entries()) {
        // The first also waits for every pipeline to fill.
        if (x.cycle > prev + turn + (i === 0 ? READY_AFTER : 0)) {
          miss({ cycle: x.cycle, qp: q, what: "the gap between two of the QP\u2019s ULPDUs", expected: `at most ${turn} cycles (${busy.length} QPs busy)`, actual: `${x.cycle - prev} cycles, from cycle ${prev} to ${x.cycle}` });
          break;
        }
        prev = Math.max(prev, x.cycle);
      }
      const name = (k: number) => (k === 1 ? 'Read Response' : 'Write');
      if (t) miss({ cycle: order[t.at]!.cycle, qp: q, what: "the round-robin of the QP\u2019s two queues", expected: `at most 1 ULPDU of the other queue between two ${name(t.source)} ULPDUs`, actual: `${t.waited} (order ${seq.slice(Math.max(0, t.at - 12), t.at + 1).map((k) => (k ? 'R' : 'W')).join('')})` });
    }
    // The QPs' rotation on m_axis.
    const tids = frames.map((f) => f.tid);
    const perQp = new Map(busy.map((q) => [q, tids.filter((t) => t === q).length] as const));
    const s = firstStarved(tids, perQp, busy.length - 1);
    if (s) miss({ cycle: frames[s.at]!.cycle, qp: s.source, what: 'the QPs\u2019 round-robin on m_axis', expected: `at most ${busy.length - 1} FPDUs of other QPs between two of QP ${s.source}`, actual: `${s.waited} (m_axis tid order ${tids.slice(Math.max(0, s.at - 12), s.at + 1).join(' ')})` });
  };

  let cycles = 0;
  try {
    // Every QP at once (the QPs share m_axis and the memory read port), then one alone (its two
    // queues share the whole read port: a queue its arbiter passes over gets no data).
    round(Array.from({ length: qps }, (_, q) => q));
    round([r.int(0, qps - 1)]);
    cycles = model.cycles;
  } finally {
    model.close();
  }
  mismatches.sort((a, b) => a.cycle - b.cycle);
  return { dut: 'rnic_fairness', module: `rnic_top_w${W}`, width: W, qps, seed: opts.seed, fpdus, cycles, mismatches: mismatches.length, firstMismatch: mismatches[0] ?? null };
}
