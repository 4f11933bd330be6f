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
 * beat, a held QP (loaded with cfg_hold, as the top loads a fenced one) sending no beat until the
 * cycle after its release (release_valid / release_qp), idle never 1 while a QP that is not held
 * has a work request not yet sent, and fairness: the messages of other QPs sent while a QP waits
 * with work are counted; the largest count is returned (the round-robin bound is checked by the
 * test). Releases of QPs not held (never, or no longer) are driven too: they change nothing.
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

/**
 * A QP loaded held (cfg_hold) and the cycle (from the first cycle after reset) its release is
 * driven: that cycle or, with another release there, the next free one, and not before every QP
 * is loaded.
 */
export interface Hold {
  readonly qp: number;
  readonly release: number;
}

/**
 * A release of a QP that is not held at `at` (never held, or released before): it changes
 * nothing. `early`: driven at `at` even while the QPs are being loaded (to meet a cfg).
 */
export interface SpareRelease {
  readonly qp: number;
  readonly at: number;
  readonly early?: boolean;
}

/** A run of the shared block: the one-QP block's run options, with each QP's requests and configuration. */
export interface SharedRunOptions extends Omit<TxBlockRunOptions<QpRequest>, 'mulpdu' | 'initialMsn'> {
  readonly qps: number;
  readonly configs: readonly QpConfig[];
  readonly holds?: readonly Hold[];
  readonly spareReleases?: readonly SpareRelease[];
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
  /** The cycle each QP's cfg was taken. */
  readonly cfgAt: readonly number[];
  /** Each held QP's release cycle as driven (-1: not driven before the run ended). */
  readonly releasedAt: ReadonlyMap<number, number>;
  /** Beats of held QPs taken on m_axis before their release: QP and cycle (the first 50). */
  readonly heldBeats: readonly { readonly qp: number; readonly cycle: number }[];
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
  /** QPs whose work requests were taken in this cycle (their pending counts went up before idle is checked). */
  private readonly takenNow: number[] = [];
  maxWait = 0;
  /** Held QPs and the cycle their release was driven (absent: still held). */
  readonly releasedAt = new Map<number, number>();
  readonly heldBeats: { qp: number; cycle: number }[] = [];
  readonly cfgAt: number[] = [];

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
    const holds = o.holds ?? [];
    const heldQps = new Set(holds.map((x) => x.qp));
    if (heldQps.size !== holds.length) throw new Error('a QP is loaded held once: one hold per QP');
    this.cfg = this.recordSource('cfg', { fields: (c) => ({ qp: c.qp, mulpdu: c.mulpdu, initialMsn: c.initialMsn >>> 0, hold: heldQps.has(c.qp) ? 1 : 0 }), onAccept: (c) => (this.cfgAt[c.qp] = this.stepped) });
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
        this.takenNow.push(x.qp);
      },
    });
    this.mem = this.memory({ width: o.width, prefix: '', ports: 'read', memory: o.memory, rdPause, latency: { min: o.minLatency ?? 1, max: o.maxLatency ?? 6 }, report });
    this.ulpduStream(o.width, o.sinkPause);
    const h = (n: string) => model.handle(n);
    const [sentValid, sentQp, tvalid, tready, tlast, tid, relValid, relQp, idle] = [
      h('m_sent_valid'), h('m_sent_qp'), h('m_axis_tvalid'), h('m_axis_tready'), h('m_axis_tlast'), h('m_axis_tid'), h('release_valid'), h('release_qp'), h('idle'),
    ];
    // Held until the cycle its release is driven (taken at that cycle's edge).
    const heldAt = (qp: number, cycle: number) => heldQps.has(qp) && !(this.releasedAt.get(qp)! < cycle);
    // The release pulses, a cycle each, in order: the holds' first (their cycles decide heldAt),
    // then the spare ones in the cycles left.
    const pulses: { qp: number; at: number; held: boolean; early: boolean }[] = [];
    const taken = new Set<number>();
    const place = (qp: number, at: number, held: boolean, early = false) => {
      let c = at;
      while (taken.has(c)) c++;
      taken.add(c);
      pulses.push({ qp, at: c, held, early });
    };
    for (const x of holds) place(x.qp, x.release, true);
    for (const x of o.spareReleases ?? []) place(x.qp, x.at, false, x.early);
    pulses.sort((a, b) => a.at - b.at);
    let frameTid = -1;
    this.add({
      // One release a cycle, once every QP is loaded (a release before its cfg would be undone by it).
      drive: () => {
        const p = pulses[0];
        const now = p !== undefined && p.at <= this.stepped && (p.early || this.cfg.idle);
        if (now) {
          pulses.shift();
          if (p.held) this.releasedAt.set(p.qp, this.stepped);
        }
        model.pokeNumber(relValid, now ? 1 : 0);
        model.pokeNumber(relQp, now ? p.qp : 0);
      },
      sample: () => {
        const cycle = this.stepped;
        // Idle: nothing in progress but the work requests of held QPs (taken this cycle: not yet in).
        if (model.peekPreNumber(idle) === 1) {
          for (const q of this.takenNow) this.pending[q]!--;
          const busy = this.pending.findIndex((n, q) => n > 0 && !heldAt(q, cycle));
          if (busy >= 0) report(`idle with ${this.pending[busy]} work request(s) of QP ${busy}, not held, not yet sent at cycle ${cycle}`);
          for (const q of this.takenNow) this.pending[q]!++;
        }
        this.takenNow.length = 0;
        if (model.peekPreNumber(tvalid) === 1 && model.peekPreNumber(tready) === 1) {
          const t = model.peekPreNumber(tid);
          if (t >= N) report(`m_axis_tid ${t} names no QP at cycle ${cycle}`);
          else if (heldAt(t, cycle) && this.heldBeats.length < 50) this.heldBeats.push({ qp: t, cycle });
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
      },
    });
    this.cfg.pushAll(o.configs.map((c, qp) => ({ qp, ...c })));
    this.quiet(['wr_valid', 'cfg_valid', 'release_valid', 'rd_ready', 'rd_data_valid', 'm_axis_tready']);
  }
}

export function runDdpTxShared(o: SharedRunOptions): SharedRun {
  const W = o.width;
  const N = o.qps;
  const name = ddpTxName(W, N);
  const tb = new DdpTxSharedBench(o.model ?? openDut(name, o.dut).model, o);
  tb.wr.pushAll(o.requests);
  const payload = (q: TxRequest) => (q.kind === 'write' || q.kind === 'send' ? q.len : 0);
  const lastHold = Math.max(0, ...(o.holds ?? []).map((x) => x.release));
  const budget = 2000 + N + lastHold + o.requests.reduce((n, x) => n + payload(x.q) + 100, 0) * 4;
  const { stepped: _, ulpdus, ulpduAt, ...end } = tb.finish(() => tb.sent >= o.requests.length, budget, `${o.requests.length} work requests sent by ${name}`, o.model !== undefined);
  const byQp: Uint8Array[][] = Array.from({ length: N }, () => []);
  const byQpAt: number[][] = Array.from({ length: N }, () => []);
  ulpdus.forEach((u, i) => {
    const t = tb.frameTids[i] ?? 0;
    byQp[t]?.push(u);
    byQpAt[t]?.push(ulpduAt[i]!);
  });
  for (const x of o.holds ?? []) if (!tb.releasedAt.has(x.qp)) tb.releasedAt.set(x.qp, -1);
  return { ...end, byQp, byQpAt, sentByQp: tb.sentByQp, maxWait: tb.maxWait, cfgAt: tb.cfgAt, releasedAt: tb.releasedAt, heldBeats: tb.heldBeats };
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
  readonly holds: readonly Hold[];
  /** Each held QP's release cycle as driven. */
  readonly releasedAt: ReadonlyMap<number, number>;
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
  const spareReleases: SpareRelease[] = [];
  if (o.holds ?? true) {
    // Some QPs loaded held (as the top loads a fenced QP), released early or late in the run, now
    // and then all in the same cycle (then one a cycle, back to back).
    for (let qp = 0; qp < N; qp++) if (r.bool(0.3)) holds.push({ qp, release: r.bool(0.5) ? r.int(100, 3000) : r.int(3000, 20000) });
    if (holds.length === 0) holds.push({ qp: r.int(0, N - 1), release: r.int(100, 3000) });
    if (r.bool(0.3)) {
      const at = r.int(100, 3000);
      holds.splice(0, holds.length, ...holds.map((x) => ({ ...x, release: at })));
    }
    // Releases of QPs not held at the time: nothing may change.
    for (let i = 0; i < N; i++) {
      const qp = r.int(0, N - 1);
      const h = holds.find((x) => x.qp === qp);
      spareReleases.push({ qp, at: h ? h.release + r.int(N + 1, 5000) : r.int(0, 20000) });
    }
  }
  const memory = new BackgroundMemory();
  const expected = configs.map((c, qp) => expectedUlpdus(requests.filter((x) => x.qp === qp).map((x) => x.q), memory, c));
  const p = o.pause ?? 0.3;
  const run = runDdpTxShared({
    width: W, qps: N, requests, configs, memory, holds, spareReleases, seed: r.u32(), wrGap: p, rdPause: p, sinkPause: p,
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
  // A held QP sends no beat before its release.
  out.unshift(
    ...run.heldBeats.map((b): SharedMismatch => {
      const at = run.releasedAt.get(b.qp)!;
      return { qp: b.qp, what: 'held QP', index: -1, cycle: b.cycle, expected: at < 0 ? 'nothing: never released' : `nothing before its release at cycle ${at}`, actual: 'a beat on m_axis' };
    }),
  );
  const count = (k: TxRequest['kind']) => requests.filter((x) => x.q.kind === k).length;
  const qn = (qp: number, kinds: readonly TxRequest['kind'][]) => requests.filter((x) => x.qp === qp && kinds.includes(x.q.kind)).length;
  return {
    module: ddpTxName(W, N),
    seed: o.seed,
    ulpdus: expected.reduce((n, e) => n + e.length, 0),
    mismatches: out.length,
    ...(out[0] && { firstMismatch: out[0] }),
    maxWait: run.maxWait,
    holds,
    releasedAt: run.releasedAt,
    coverage: {
      write: count('write'), send: count('send'), read: count('read'), immediate: count('immediate'), atomic: count('atomic'),
      qpsUsed: new Set(requests.map((x) => x.qp)).size,
      msnWrapped: configs.some((c, qp) => c.initialMsn + Math.min(qn(qp, ['send', 'immediate']), qn(qp, ['read', 'atomic'])) > 0xffffffff),
      atomicSplit: requests.some((x) => x.q.kind === 'atomic' && configs[x.qp]!.mulpdu < 70),
    },
  };
}
