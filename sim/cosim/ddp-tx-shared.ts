import { WORK_REQUEST } from '../../hdl-gen/blocks/records';
import { ddpTxName, ddpTxWrQueue } from '../../hdl-gen/blocks/ddp-tx';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { RecordSource } from '../cocotb/record-source';
import type { SimModel } from '../verilator/model';
import type { HostMemoryPort } from '../harness/host-memory-port';
import { BackgroundMemory } from '../harness/memory';
import { openDut, type DutOptions } from '../harness/open-dut';
import { expectedUlpdus, randomTxRequests } from './ddp-tx';
import { TxBlockBench, type TxBlockRunOptions } from './tx-bench';
import { ulpduMismatches, type UlpduMismatch } from './tx-ports';
import { WR_NOISE_FIELDS, wrFields, type TxRequest } from './wr-request';

/**
 * Co-simulation of ddp_tx_w<W>_q<N> (hdl-gen/blocks/ddp-tx.ts with qps > 1, its scheduler in
 * ddp-tx-sched.ts): every QP has its own model `RdmapEndpoint` (its own MULPDU and initial MSN,
 * loaded on the cfg port), work requests of every kind go to random QPs on one wr port (wr_qp),
 * and each QP's ULPDUs (by m_axis_tid, in order) are compared octet for octet with its
 * endpoint's. Checked on the way, besides the single-QP bench's stream checks: tid constant within
 * a ULPDU, m_sent_valid once per work request of m_sent_qp with m_sent_qp = the tid of the last
 * beat, a held QP (sched_hold, answered combinationally from sched_qp) sending nothing beyond
 * what it was served before the hold, and fairness: the messages of other QPs sent while a QP
 * waits with work are counted; the largest count is returned (the round-robin bound is checked by
 * the test).
 */

/** A work request for a QP. */
export interface QpRequest {
  readonly qp: number;
  readonly q: TxRequest;
}

export interface QpConfig {
  readonly mulpdu: number;
  readonly initialMsn: number;
}

/** A stretch of cycles (from the first cycle after reset) a QP is held. */
export interface Hold {
  readonly qp: number;
  readonly from: number;
  readonly to: number;
}

/** A run of the shared block: the one-QP block's run options, with each QP's requests and configuration. */
export interface SharedRunOptions extends Omit<TxBlockRunOptions<QpRequest>, 'mulpdu' | 'initialMsn'> {
  readonly qps: number;
  readonly configs: readonly QpConfig[];
  readonly holds?: readonly Hold[];
  readonly wrGap?: number;
}

export interface SharedRun {
  /** Each QP's ULPDUs in the order they came out. */
  readonly byQp: Uint8Array[][];
  readonly byQpAt: number[][];
  readonly sentByQp: number[];
  readonly violations: string[];
  readonly violationAt: number[];
  readonly idleAtEnd: boolean;
  readonly endCycle: number;
  readonly acceptedAt: number[];
  readonly lastBeatAt: number[];
  /** The most messages of other QPs completed while a QP had work and was not held. */
  readonly maxWait: number;
  /** The most messages a QP completed inside one of its holds (served before it began). */
  readonly maxSentWhileHeld: number;
}

class DdpTxSharedBench extends TxBlockBench {
  readonly wr: RecordSource<QpRequest>;
  readonly cfg: RecordSource<{ qp: number } & QpConfig>;
  readonly mem: HostMemoryPort;
  sent = 0;
  /** The tid of each ULPDU, in the order the sink collects them. */
  readonly frameTids: number[] = [];
  readonly sentByQp: number[];
  /** Work requests accepted and not yet sent, per QP. */
  private readonly pending: number[];
  private readonly waited: number[];
  maxWait = 0;
  maxSentWhileHeld = 0;
  private readonly heldSent = new Map<Hold, number>();

  constructor(model: SimModel, o: SharedRunOptions) {
    super(model, o.seed);
    const r = this.r;
    const report = this.report;
    const N = o.qps;
    this.sentByQp = Array.from({ length: N }, () => 0);
    this.pending = Array.from({ length: N }, () => 0);
    this.waited = Array.from({ length: N }, () => 0);
    const wrGap = this.pause(o.wrGap ?? 0.3);
    const rdPause = this.pause(o.rdPause ?? 0.3);
    this.cfg = this.recordSource('cfg', { fields: (c) => ({ qp: c.qp, mulpdu: c.mulpdu, initialMsn: c.initialMsn >>> 0 }) });
    // Atomics numbered from 1 per QP, as each QP's model endpoint numbers its Request Identifiers.
    const requestIds = Array.from({ length: N }, () => 1);
    const ids = o.requests.map((x) => (x.q.kind === 'atomic' ? requestIds[x.qp]!++ : 0));
    let next = 0;
    this.wr = this.recordSource('wr', {
      layout: WORK_REQUEST,
      beside: ['qp'],
      gap: wrGap,
      // A QP's work requests only after its context is loaded.
      when: () => this.cfg.idle,
      filler: () => ({ ...this.wr.group.random(r, WR_NOISE_FIELDS), solicited: r.int(0, 1), invalidate: r.int(0, 1), aopcode: r.int(0, 15) }),
      fields: (x) => ({ ...wrFields(x.q, ids[next]!), qp: x.qp }),
      onAccept: (x) => {
        next++;
        this.acceptedAt.push(this.stepped);
        this.pending[x.qp]!++;
      },
    });
    this.mem = this.memory({ width: o.width, prefix: '', ports: 'read', memory: o.memory, rdPause, latency: { min: o.minLatency ?? 1, max: o.maxLatency ?? 6 }, report });
    this.ulpduStream(o.width, o.sinkPause);
    const h = (n: string) => model.handle(n);
    const [sentValid, sentQp, tvalid, tready, tlast, tid, schedQp, schedHold] = [
      h('m_sent_valid'), h('m_sent_qp'), h('m_axis_tvalid'), h('m_axis_tready'), h('m_axis_tlast'), h('m_axis_tid'), h('sched_qp'), h('sched_hold'),
    ];
    const holds = o.holds ?? [];
    const heldAt = (qp: number, cycle: number) => holds.some((x) => x.qp === qp && cycle >= x.from && cycle < x.to);
    let frameTid = -1;
    this.add({
      // The hold lookup: answered from sched_qp in the same cycle, as a top's register file would.
      drive: () => model.pokeNumber(schedHold, heldAt(model.peekNumber(schedQp), this.stepped) ? 1 : 0),
      sample: () => {
        const cycle = this.stepped;
        if (model.peekPreNumber(tvalid) === 1 && model.peekPreNumber(tready) === 1) {
          const t = model.peekPreNumber(tid);
          if (t >= N) report(`m_axis_tid ${t} names no QP at cycle ${cycle}`);
          if (frameTid >= 0 && t !== frameTid) report(`m_axis_tid changed from ${frameTid} to ${t} inside a ULPDU at cycle ${cycle}`);
          const last = model.peekPreNumber(tlast) === 1;
          if (last) this.frameTids.push(frameTid >= 0 ? frameTid : t);
          frameTid = last ? -1 : t;
        }
        if (model.peekPreNumber(sentValid) !== 1) return;
        this.sent++;
        const qp = model.peekPreNumber(sentQp);
        if (model.peekPreNumber(tvalid) !== 1 || model.peekPreNumber(tready) !== 1 || model.peekPreNumber(tlast) !== 1) report(`m_sent_valid without a taken last beat at cycle ${cycle}`);
        else if (model.peekPreNumber(tid) !== qp) report(`m_sent_qp ${qp} but m_axis_tid ${model.peekPreNumber(tid)} at cycle ${cycle}`);
        if (qp >= N) return report(`m_sent_qp ${qp} names no QP at cycle ${cycle}`);
        this.sentByQp[qp]!++;
        if (this.pending[qp]! === 0) report(`m_sent_valid for QP ${qp} with no work request of it pending at cycle ${cycle}`);
        else this.pending[qp]!--;
        // Fairness: every other QP with work, not held, waited one more message.
        this.waited[qp] = 0;
        for (let p = 0; p < N; p++) {
          if (p === qp || this.pending[p]! === 0) continue;
          if (heldAt(p, cycle)) {
            this.waited[p] = 0;
            continue;
          }
          this.waited[p]!++;
          this.maxWait = Math.max(this.maxWait, this.waited[p]!);
        }
        for (const x of holds)
          if (x.qp === qp && cycle >= x.from && cycle < x.to) {
            const n = (this.heldSent.get(x) ?? 0) + 1;
            this.heldSent.set(x, n);
            this.maxSentWhileHeld = Math.max(this.maxSentWhileHeld, n);
          }
      },
    });
    this.cfg.pushAll(o.configs.map((c, qp) => ({ qp, ...c })));
    this.quiet(['wr_valid', 'cfg_valid', 'sched_hold', 'rd_ready', 'rd_data_valid', 'm_axis_tready']);
  }
}

export function runDdpTxShared(o: SharedRunOptions): SharedRun {
  const W = o.width;
  const N = o.qps;
  const name = ddpTxName(W, N);
  const tb = new DdpTxSharedBench(o.model ?? openDut(name, o.dut).model, o);
  tb.wr.pushAll(o.requests);
  const payload = (q: TxRequest) => (q.kind === 'write' || q.kind === 'send' ? q.len : 0);
  const lastHold = Math.max(0, ...(o.holds ?? []).map((x) => x.to));
  const budget = 2000 + N + lastHold + o.requests.reduce((n, x) => n + payload(x.q) + 100, 0) * 4;
  const { stepped: _, ulpdus, ulpduAt, ...end } = tb.finish(() => tb.sent >= o.requests.length, budget, `${o.requests.length} work requests sent by ${name}`, o.model !== undefined);
  const byQp: Uint8Array[][] = Array.from({ length: N }, () => []);
  const byQpAt: number[][] = Array.from({ length: N }, () => []);
  ulpdus.forEach((u, i) => {
    const t = tb.frameTids[i] ?? 0;
    byQp[t]?.push(u);
    byQpAt[t]?.push(ulpduAt[i]!);
  });
  return { ...end, byQp, byQpAt, sentByQp: tb.sentByQp, maxWait: tb.maxWait, maxSentWhileHeld: tb.maxSentWhileHeld };
}

// ---- the random co-simulation ---------------------------------------------------------------------

export interface SharedCosimOptions {
  readonly width: number;
  readonly qps: number;
  readonly seed: number;
  readonly requests: number;
  /** Per-cycle probability of a request gap and of rd / m_axis back-pressure (default 0.3). */
  readonly pause?: number;
  /** Random holds (default on). */
  readonly holds?: boolean;
  readonly maxSize?: number;
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

export interface SharedMismatch extends UlpduMismatch {
  readonly qp: number;
}

export interface SharedCosimResult {
  readonly module: string;
  readonly seed: number;
  readonly ulpdus: number;
  readonly mismatches: number;
  readonly firstMismatch?: SharedMismatch;
  readonly maxWait: number;
  readonly maxSentWhileHeld: number;
  readonly holds: readonly Hold[];
  readonly coverage: Readonly<Record<TxRequest['kind'], number>> & { readonly qpsUsed: number; readonly msnWrapped: boolean; readonly atomicSplit: boolean };
}

/** MULPDUs the QPs pick from: tiny (the Atomic Request takes two segments below 70), odd, Ethernet, jumbo. */
const MULPDUS = [64, 66, 100, 1460, 9000] as const;

/**
 * Messages of other QPs a QP with work may wait for: it enters the scheduler FIFO behind at most
 * N − 1 QPs, each served one message a round, after its work request waited in the input FIFO
 * behind at most two others whose rings were full (a round each at most), while the requester's
 * queue (ddpTxWrQueue(W) + 1 credits) and the started messages in the output stages are sent.
 */
export const fairnessBound = (W: number, N: number): number => 3 * (N - 1) + ddpTxWrQueue(W) + 1 + 4;

/**
 * Messages of a QP that may still complete once it is held: those served before (the requester's
 * credits, ddpTxWrQueue(W) + 1) and those started and still in the output stages.
 */
export const heldBound = (W: number): number => ddpTxWrQueue(W) + 1 + 4;

export function cosimDdpTxShared(o: SharedCosimOptions): SharedCosimResult {
  const r: Prng = prng(o.seed);
  const W = o.width;
  const N = o.qps;
  const configs: QpConfig[] = Array.from({ length: N }, () => ({ mulpdu: r.pick([...MULPDUS, r.int(64, 9000)]), initialMsn: (0xffffffff - r.int(0, 5)) >>> 0 }));
  // QP 0, which takes a share of the work in every run, below MULPDU 70 (its Atomic Requests in two segments).
  configs[0] = { ...configs[0]!, mulpdu: r.int(64, 69) };
  // A few QPs take most of the work (they queue up behind each other), the rest a little.
  const busy = Array.from({ length: N }, () => r.bool(0.5));
  const requests: QpRequest[] = [];
  for (let i = 0; i < o.requests; i++) {
    const qp = r.bool(0.7) ? r.pick(busy.flatMap((b, q) => (b ? [q] : [])).concat([0])) : r.int(0, N - 1);
    const [q] = randomTxRequests(r, 1, configs[qp]!.mulpdu, W, o.maxSize ?? 6000);
    requests.push({ qp, q: q! });
  }
  const holds: Hold[] = [];
  if (o.holds ?? true) {
    // Some QPs held from the start (they must send nothing then), others for stretches later on.
    for (let qp = 0; qp < N; qp++) if (r.bool(0.25)) holds.push({ qp, from: 0, to: r.int(200, 3000) });
    if (holds.length === 0) holds.push({ qp: r.int(0, N - 1), from: 0, to: r.int(200, 3000) });
    for (let i = 0; i < N; i++) {
      const from = r.int(0, 20000);
      holds.push({ qp: r.int(0, N - 1), from, to: from + r.int(50, 2000) });
    }
  }
  const memory = new BackgroundMemory();
  const expected = configs.map((c, qp) => expectedUlpdus(requests.filter((x) => x.qp === qp).map((x) => x.q), memory, c));
  const p = o.pause ?? 0.3;
  const run = runDdpTxShared({
    width: W, qps: N, requests, configs, memory, holds, seed: r.u32(), wrGap: p, rdPause: p, sinkPause: p,
    ...(o.model && { model: o.model }),
    ...(o.dut && { dut: o.dut }),
  });
  const end = run.endCycle;
  const out: SharedMismatch[] = run.violations.map((v, i) => ({ qp: -1, what: 'protocol', index: -1, cycle: run.violationAt[i] ?? end, expected: 'no violation', actual: v }));
  if (!run.idleAtEnd) out.push({ qp: -1, what: 'idle', index: -1, cycle: end, expected: '1 at the end', actual: '0' });
  for (let qp = 0; qp < N; qp++) {
    const want = requests.filter((x) => x.qp === qp).length;
    if (run.sentByQp[qp] !== want) out.push({ qp, what: 'm_sent_valid pulses', index: -1, cycle: end, expected: String(want), actual: String(run.sentByQp[qp]) });
    out.push(...ulpduMismatches(expected[qp]!, run.byQp[qp]!, run.byQpAt[qp]!, end).map((m) => ({ ...m, qp })));
  }
  // Held from the start: nothing was served to it before, so nothing may come out.
  for (const x of holds.filter((h) => h.from === 0)) {
    const early = run.byQpAt[x.qp]!.filter((c) => c < x.to).length;
    if (early) out.push({ qp: x.qp, what: 'held QP', index: -1, cycle: x.to, expected: `nothing before cycle ${x.to}`, actual: `${early} ULPDU(s)` });
  }
  const count = (k: TxRequest['kind']) => requests.filter((x) => x.q.kind === k).length;
  const qn = (qp: number, kinds: readonly TxRequest['kind'][]) => requests.filter((x) => x.qp === qp && kinds.includes(x.q.kind)).length;
  return {
    module: ddpTxName(W, N),
    seed: o.seed,
    ulpdus: expected.reduce((n, e) => n + e.length, 0),
    mismatches: out.length,
    ...(out[0] && { firstMismatch: out[0] }),
    maxWait: run.maxWait,
    maxSentWhileHeld: run.maxSentWhileHeld,
    holds,
    coverage: {
      write: count('write'), send: count('send'), read: count('read'), immediate: count('immediate'), atomic: count('atomic'),
      qpsUsed: new Set(requests.map((x) => x.qp)).size,
      msnWrapped: configs.some((c, qp) => c.initialMsn + Math.min(qn(qp, ['send', 'immediate']), qn(qp, ['read', 'atomic'])) > 0xffffffff),
      atomicSplit: requests.some((x) => x.q.kind === 'atomic' && configs[x.qp]!.mulpdu < 70),
    },
  };
}
