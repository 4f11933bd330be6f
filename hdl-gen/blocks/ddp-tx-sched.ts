import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { ATOMIC_REQUEST_HEADER_SIZE } from '../../ts-model/rdmap/constants';
import { type Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { bramFifo } from '../lib/fifo-bram';
import { anyOf, oneHotMux } from '../lib/onehot';
import { ram, indexBits } from '../lib/ram';
import { record } from '../lib/record';
import type { rnicNames } from './names';
import { WORK_REQUEST } from './records';

/**
 * The front of ddp_tx_w<W>_q<N> (hdl-gen/blocks/ddp-tx.ts with qps > 1): the work requests of N
 * QPs in per-QP rings in one RAM, and a scheduler over the QPs with work that hands one work
 * request at a time, with its QP, MSN and MULPDU, to the requester's in-order send queue (wrq),
 * from where the fetcher, segmenter and output stages run as for one QP. Everything per QP is in
 * RAM (qp_ctx: N records; ring: 4N work requests; the scheduler FIFO: N indices), so LUTs and
 * depth do not grow with N, only the RAMs and the index width.
 *
 * - Input: wr_* (with wr_qp) enter a small shared input FIFO (wr_ready = it has room, a
 *   register); from its head a work request moves to its QP's ring when the ring has room. A
 *   request for a QP whose ring is full waits at the head and holds back those behind it (as the
 *   port itself would, since a valid request stays until taken), until that QP is served once.
 *   The ring has DDP_TX_RING entries.
 * - Per-QP context (qp_ctx): the ring's head, tail and count (with count == 0, 1, RING as bits
 *   written with it), whether the QP is queued in the scheduler, whether it is held (MPA fencing),
 *   the next MSN of QN 0 and of QN 1, MULPDU and what derives from it (QP_MTU). One
 *   read-modify-write pipeline serves every operation, one a cycle: look up (cycle t), decide and
 *   write back (t + 1). Hazard rule: the RAM reads first, so a lookup misses only the write-back
 *   of its own cycle; that one is forwarded (its index compare made in cycle t beside the issue,
 *   registered), so the same QP in consecutive operations (enqueue then serve, serve then serve,
 *   release then serve, release then cfg) reads its current state with no stall. Operations,
 *   highest priority first: clear (after rst, one QP a cycle, N cycles; cfg_ready and wr_ready are
 *   low meanwhile), release (the one taken in the cycle before; cfg_ready is low while it
 *   issues), cfg (cfg_valid), then enqueue and serve, alternating when both wait.
 * - Enqueue: the input FIFO's head goes to ring[qp][tail]; it takes its MSN there (RFC 5041 §5.1:
 *   QN 0 counts Sends and Immediate Data, QN 1 Read Requests and Atomic Requests, in posting
 *   order), so a QP's messages keep their order and MSNs whatever the order the QPs are served in.
 *   A ring that goes from empty to non-empty queues its QP (a FIFO of QP indices, Corundum's
 *   tx_scheduler_rr): each QP is in it at most once. One enqueue every other cycle at most (the
 *   input head leaves in the write-back cycle).
 * - Serve: the scheduler FIFO's head is popped and its context looked up; a held QP (its
 *   context's hold bit, as current as any other field: a release written back in the cycle of
 *   the lookup is forwarded) is put back at the tail, the others go on. Otherwise its oldest work
 *   request is read from the ring and handed over two cycles after the pop (`valid`), and the QP
 *   goes back to the tail if its ring still has work. A pop needs a credit: the requester's queue
 *   takes every served request (credits = its room, returned as requests start, or a cycle after
 *   a pop that served nothing), so a served request never waits. A QP that is the only one with
 *   work is popped again three cycles after its previous pop (the FIFO's block RAM write and
 *   read).
 * - cfg (cfg_valid with cfg_ready): the QP's MULPDU, both MSN counters restart at
 *   cfg_initial_msn, its ring is emptied (tail := head), it is held if cfg_hold (MPA fencing,
 *   RFC 6581 §3: the responder sends nothing before the peer's first FPDU); requests already
 *   served go on with the old values. Load a QP before its first work request.
 * - Release (release_valid, release_qp; no ready: one is taken every cycle): the QP's hold is
 *   cleared; its work requests are served from then on, in their turn. A release is registered
 *   and issues in the next cycle, ahead of cfg, so it is never refused (cfg_ready is 0 in that
 *   cycle instead: a register, not a function of release_valid). A release taken in the cycle a
 *   cfg of the same QP is taken is dropped: the new context's hold stands (the release belongs
 *   to the connection the cfg ends; the cfg counts as later). A release registered while the
 *   contexts are cleared after rst is dropped (the clear leaves every QP unheld). Lag: a release
 *   taken in cycle t is looked up in t + 1 (a pop due then waits a cycle) and written back in
 *   t + 2; a pop of the QP from t + 2 on serves it (forwarded), one in t or before skips it.
 * - Idle: nothing in the front but the work requests of held QPs (they cycle through the
 *   scheduler FIFO, skipped, until released): a count of the work requests in the rings of QPs
 *   not held, moved at the write-back (enqueue, serve; a cfg that empties an unheld QP's ring, a
 *   release that lifts a held one's by the ring's count).
 *
 * Latency: a work request reaches the requester's queue 7 cycles after its handshake on an idle
 * block (input FIFO 2, enqueue 1, scheduler FIFO 2, serve and ring read 2). Rate: the scheduler
 * serves a work request every other cycle when requests also arrive (enqueue and serve
 * alternate), every cycle otherwise, so switching between QPs costs no cycle while the send queue
 * holds work: the requester takes at least two cycles per work request and its queue hides the
 * serve latency.
 */

/** Work requests each QP's ring holds (a power of two). */
export const DDP_TX_RING = 4;

/**
 * A QP's MULPDU with what the requester derives from it, computed once when the QP is loaded
 * (cfg), so the request that starts carries them and no subtraction or compare of MULPDU sits
 * behind its selection: the payload room of a full tagged and untagged segment, and whether an
 * Atomic Request takes two segments (MULPDU < 70: RFC 5041 section 5.2, as segmentMessage cuts it).
 */
export const QP_MTU = record('ddp_tx_mtu', {
  mulpdu: { width: 16, doc: 'MULPDU' },
  room_tagged: { width: 16, doc: 'MULPDU - 14: payload octets of a full Write segment' },
  room_untagged: { width: 16, doc: 'MULPDU - 18: of a full Send segment' },
  atomic_split: { width: 1, doc: 'MULPDU < 70: an Atomic Request goes out as two segments' },
  atomic_len: { width: 7, doc: "octets of the Atomic Request's first segment: MULPDU below 70, else 70" },
  tail_sel: { width: 3, doc: 'MULPDU - 64 when atomic_split (0..5): which second segment' },
});

/** MULPDU of the QP whose QP_MTU has `tailSel` (valid when atomic_split): 64..69, for atomicRequestTail. */
export const splitMulpdu = (tailSel: Expr): Expr => lit(16, 64).add(tailSel.zext(16));

/** The QP_MTU value of `mulpdu`. */
export const mtuOf = (mulpdu: Expr): Expr =>
  QP_MTU.pack({
    mulpdu,
    room_tagged: mulpdu.sub(TAGGED_HEADER_SIZE),
    room_untagged: mulpdu.sub(UNTAGGED_HEADER_SIZE),
    atomic_split: mulpdu.lt(ATOMIC_ULPDU),
    atomic_len: mux(mulpdu.lt(ATOMIC_ULPDU), mulpdu.slice(6, 0), lit(7, ATOMIC_ULPDU)),
    // 64..69 are 0b1000000 + 0..5: the low three bits.
    tail_sel: mulpdu.slice(2, 0),
  });

/** The Atomic Request ULPDU's octets (RFC 7306 section 5.2.1). */
const ATOMIC_ULPDU = UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE;

export interface TxScheduler {
  /** A served work request reaches the requester this cycle (always taken). */
  readonly valid: Signal;
  /** Its fields (a WORK_REQUEST view), QP, MSN (of QN 0 or QN 1 by its kind). */
  readonly wr: ReturnType<typeof WORK_REQUEST.view>;
  readonly qp: Signal;
  readonly msn: Expr;
  /** Its QP's QP_MTU. */
  readonly mtu: Expr;
  /** No work request anywhere in the front (input FIFO, rings, pipeline, a served one) but in the rings of held QPs. */
  readonly idle: Expr;
}

export interface TxSchedulerConfig {
  readonly qps: number;
  /** The module's code points (rnicNames). */
  readonly names: ReturnType<typeof rnicNames>;
  /** Work requests the requester takes beyond the one it sends (its queue plus one). */
  readonly credits: number;
  /** A work request the scheduler served starts in the requester this cycle (a credit returns). */
  readonly started: Expr;
  readonly wr: { readonly valid: Signal; readonly ready: Signal; readonly qp: Signal; readonly value: Expr };
  readonly cfg: { readonly valid: Signal; readonly ready: Signal; readonly qp: Signal; readonly mulpdu: Signal; readonly initialMsn: Signal; readonly hold: Signal };
  /** Lifts a QP's hold (taken every cycle). */
  readonly release: { readonly valid: Signal; readonly qp: Signal };
}

export function txScheduler(m: ModuleBuilder, c: TxSchedulerConfig): TxScheduler {
  const N = c.qps;
  const qb = indexBits(N);
  const rb = Math.log2(DDP_TX_RING);
  const pw = rb + 1;
  const K = c.names;

  // ---- Per-QP context ------------------------------------------------------------------------
  // The ring's fill is kept as a count and, for the decisions, as three flags written with it, so
  // each decision is a bit of the looked-up record rather than a compare behind its mux.
  const QP_CTX = record('ddp_tx_qp_ctx', {
    head: { width: rb, doc: 'ring index of the oldest work request' },
    tail: { width: rb, doc: 'ring index of the next work request to enter' },
    count: { width: pw, doc: 'work requests in the ring' },
    empty: { width: 1, doc: 'count == 0' },
    one: { width: 1, doc: 'count == 1' },
    full: { width: 1, doc: `count == ${DDP_TX_RING}` },
    queued: { width: 1, doc: 'the QP is in the scheduler FIFO or being served' },
    hold: { width: 1, doc: 'held (cfg_hold, until a release): served nothing, skipped by the scheduler' },
    msn_send: { width: 32, doc: 'MSN of the next message on QN 0 (RFC 5041 section 5.1)' },
    msn_read: { width: 32, doc: 'MSN of the next message on QN 1' },
    mtu: QP_MTU,
  });
  // A context memory (as hdl-gen/lib/context.ts) with read latency 1, whose forwarding is
  // decided a cycle early: the only write-back a lookup does not see in the RAM is the one in
  // its own cycle (read-first), so the index compare is made then and registered, and the value
  // is one mux behind the RAM's read register (context.ts compares at the output, three LUT
  // levels before any decision).
  const ctxRam = ram(m, 'qp_ctx', { width: QP_CTX.width, depth: N, latency: 1, doc: 'per-QP ring pointers, hold, MSNs, MULPDU' });
  const fwdHit = m.reg('qp_ctx_fwd', 1, { reset: 0, doc: "the lookup's QP was written back in its own cycle: use qp_ctx_fwd_data" });
  const fwdData = m.reg('qp_ctx_fwd_data', QP_CTX.width, { doc: 'that write-back' });
  const ctxValue = m.let('qp_ctx_value', mux(fwdHit, fwdData, ctxRam.data), { doc: 'the looked-up context, current' });
  const RING_ENTRY = record('ddp_tx_ring_entry', {
    wr: WORK_REQUEST,
    msn: { width: 32, doc: 'the MSN taken at enqueue (QN 0 or QN 1 by kind)' },
    mtu: QP_MTU,
  });
  const ring = ram(m, 'ring', { width: RING_ENTRY.width, depth: N * DDP_TX_RING, latency: 1, doc: 'the work requests of every QP, DDP_TX_RING a QP' });

  // ---- Input FIFO (shared) and the scheduler FIFO of QPs with work -----------------------------
  const IN_ENTRY = record('ddp_tx_in_entry', { wr: WORK_REQUEST, qp: qb });
  const enqOk = m.wire('enq_ok', 1, { doc: 'the input head enters its ring' });
  const inq = bramFifo(m, 'wr_in', IN_ENTRY.width, 2, { push: c.wr.valid.and(c.wr.ready), data: IN_ENTRY.pack({ wr: c.wr.value, qp: c.wr.qp }), pop: enqOk });
  const inHead = IN_ENTRY.view(inq.head, { m, prefix: 'in' });
  const inWr = WORK_REQUEST.view(inHead.wr, { m, prefix: 'in_wr' });
  const actPush = m.wire('act_push', 1, { doc: 'a QP enters the scheduler FIFO' });
  const opQp = m.reg('op_qp', qb, { doc: 'QP of the operation in its write-back cycle' });
  const serveIssue = m.wire('serve_issue', 1, { doc: 'the scheduler pops a QP to serve it' });
  const actDepth = 1 << Math.max(1, Math.ceil(Math.log2(N)));
  const act = bramFifo(m, 'act', qb, actDepth, { push: actPush, data: opQp, pop: serveIssue });

  // ---- Operation issue (cycle t) -----------------------------------------------------------------
  const clearing = m.reg('clearing', 1, { reset: 1, doc: 'after rst: every QP context is being cleared, one a cycle' });
  const clearIdx = m.reg('clear_idx', qb, { reset: 0 });
  const credits = m.reg('credits', indexBits(c.credits + 1) + 1, { reset: c.credits, doc: 'work requests the requester can still take' });
  const creditOk = m.reg('credit_ok', 1, { reset: 1, doc: 'credits != 0' });
  const preferEnq = m.reg('prefer_enq', 1, { reset: 0, doc: 'enqueue wins the next tie (they alternate)' });
  const op = {
    clear: m.reg('op_clear', 1, { reset: 0 }),
    rel: m.reg('op_rel', 1, { reset: 0 }),
    cfg: m.reg('op_cfg', 1, { reset: 0 }),
    enq: m.reg('op_enq', 1, { reset: 0 }),
    serve: m.reg('op_serve', 1, { reset: 0 }),
  };
  const opMtu = m.reg('op_cfg_mtu', QP_MTU.width, { doc: "cfg_mulpdu's QP_MTU" });
  const opMsn = m.reg('op_cfg_msn', 32);
  const opHold = m.reg('op_cfg_hold', 1, { doc: 'cfg_hold' });
  // A release goes through a register and issues in the next cycle ahead of cfg, so it needs no
  // ready, and cfg_ready (0 while it issues) stays a function of registers.
  const relValid = m.reg('rel_valid', 1, { reset: 0, doc: 'a release was taken last cycle: it issues now' });
  const relQp = m.reg('rel_qp', qb, { doc: 'its QP' });
  // clearing | rel_valid as one flip-flop: the issue decisions have the inputs they had before releases.
  const blocked = m.reg('op_blocked', 1, { reset: 1, doc: 'a clear or a release issues: no cfg, enqueue or serve' });
  const cfgOpen = m.let('cfg_open', blocked.not(), { doc: 'no clear or release issues: a cfg may' });
  m.assign(c.cfg.ready, cfgOpen);
  const relIssue = m.let('rel_issue', clearing.not().and(relValid));
  const cfgIssue = m.let('cfg_issue', cfgOpen.and(c.cfg.valid));
  const free = m.let('op_free', cfgOpen.and(c.cfg.valid.not()), { doc: 'no clear, release or cfg this cycle' });
  // The input head stays until its enqueue's write-back: no second enqueue behind it.
  const enqCan = m.let('enq_can', free.and(inq.headValid).and(op.enq.not()));
  const serveCan = m.let('serve_can', free.and(act.headValid).and(creditOk));
  const enqIssue = m.let('enq_issue', enqCan.and(serveCan.not().or(preferEnq)));
  m.assign(serveIssue, serveCan.and(enqCan.not().or(preferEnq.not())));
  const lookupQp = oneHotMux([
    [clearing, clearIdx],
    [relIssue, relQp],
    [cfgIssue, c.cfg.qp],
    [enqIssue, inHead.qp],
    [serveIssue, act.head],
  ]);
  const lookupEnable = clearing.or(relIssue).or(cfgIssue).or(enqIssue).or(serveIssue);
  ctxRam.read(lookupQp, lookupEnable);
  // The forwarding compare per source, beside the issue decision (a clear reads nothing).
  const fwdNow = m.let(
    'qp_ctx_fwd_now',
    anyOf([relIssue.and(relQp.eq(opQp)), cfgIssue.and(c.cfg.qp.eq(opQp)), enqIssue.and(inHead.qp.eq(opQp)), serveIssue.and(act.head.eq(opQp))]),
    { doc: "the lookup's QP is the one written back this cycle" },
  );

  // ---- Write-back (cycle t + 1) --------------------------------------------------------------------
  const v = QP_CTX.view(ctxValue, { m, prefix: 'ctx' });
  const [empty, full, lastOne] = [v.empty, v.full, v.one];
  m.assign(enqOk, op.enq.and(full.not()));
  const held = v.hold;
  const serveOk = m.let('serve_ok', op.serve.and(held.not()).and(empty.not()), { doc: 'the QP sends its oldest work request' });
  // The QP goes back to the scheduler FIFO while it has work: held, or more than the one served.
  const requeue = m.let('serve_requeue', op.serve.and(empty.not()).and(held.or(lastOne.not())));
  m.assign(actPush, enqOk.and(v.queued.not()).or(requeue));
  const kind = inWr.kind;
  const qn0 = m.let('enq_qn0', kind.eq(K.WR.SEND).or(kind.eq(K.WR.IMMEDIATE)), { doc: 'the work request takes an MSN of QN 0' });
  const qn1 = m.let('enq_qn1', kind.eq(K.WR.READ).or(kind.eq(K.WR.ATOMIC)), { doc: 'of QN 1' });
  // The count after the operation: one more (enqueue), one less (serve), 0 (clear, cfg); a
  // release leaves it.
  const count = m.let(
    'ring_count_next',
    mux(op.clear.or(op.cfg), lit(pw, 0), mux(enqOk, v.count.add(1), mux(serveOk, v.count.sub(1), v.count))),
  );
  const next = QP_CTX.pack({
    head: mux(op.clear, lit(rb, 0), mux(serveOk, v.head.add(1), v.head)),
    tail: mux(op.clear, lit(rb, 0), mux(op.cfg, v.head, mux(enqOk, v.tail.add(1), v.tail))),
    count,
    empty: count.eq(0),
    one: count.eq(1),
    full: count.eq(DDP_TX_RING),
    queued: op.enq.and(v.queued.or(enqOk)).or(op.serve.and(requeue)).or(op.cfg.or(op.rel).and(v.queued)),
    hold: mux(op.cfg, opHold, v.hold.and(op.clear.or(op.rel).not())),
    msn_send: mux(op.cfg, opMsn, mux(op.clear, lit(32, 0), mux(enqOk.and(qn0), v.msn_send.add(1), v.msn_send))),
    msn_read: mux(op.cfg, opMsn, mux(op.clear, lit(32, 0), mux(enqOk.and(qn1), v.msn_read.add(1), v.msn_read))),
    mtu: mux(op.cfg, opMtu, mux(op.clear, lit(QP_MTU.width, 0), v.mtu)),
  });
  const opAny = m.let('op_any', op.clear.or(op.rel).or(op.cfg).or(op.enq).or(op.serve), { doc: 'an operation writes back this cycle' });
  ctxRam.write(opAny, opQp, next);
  const slot = (ptr: Expr) => cat(opQp, ptr);
  ring.write(enqOk, slot(v.tail), RING_ENTRY.pack({ wr: inHead.wr, msn: mux(qn0, v.msn_send, v.msn_read), mtu: v.mtu }));
  ring.read(slot(v.head), serveOk);

  // ---- The served work request (cycle t + 2) ---------------------------------------------------------
  const srvValid = m.reg('srv_valid', 1, { reset: 0, doc: 'ring_rd_data is a served work request' });
  const srvQp = m.reg('srv_qp', qb);
  const entry = RING_ENTRY.view(ring.data, { m, prefix: 'srv' });
  // A pop that served nothing (held, or an emptied ring) returns its credit a cycle later.
  const creditBack = m.reg('credit_back', 1, { reset: 0, doc: 'the last pop served nothing: its credit returns' });
  const cw = credits.width;
  const creditsNext = credits.add(c.started.zext(cw)).add(creditBack.zext(cw)).sub(serveIssue.zext(cw));
  const relNext = m.let('rel_next', c.release.valid.and(cfgIssue.and(c.cfg.qp.eq(c.release.qp)).not()), {
    doc: "a release is taken (one in the cycle a cfg of its QP is taken is the old connection's: dropped)",
  });
  // Work requests in the rings of QPs not held (for idle): in at an enqueue or a release (the
  // ring's count), out at a serve or a cfg (the ring is emptied).
  const ub = indexBits(N * DDP_TX_RING + 1);
  const unheld = m.reg('unheld_wrs', ub, { reset: 0, doc: 'work requests in the rings of QPs not held' });
  const one = lit(ub, 1);
  const zero = lit(ub, 0);
  const unheldIn = mux(op.rel.and(held), v.count.zext(ub), mux(enqOk.and(held.not()), one, zero));
  const unheldOut = mux(op.cfg.and(held.not()), v.count.zext(ub), mux(serveOk, one, zero));

  m.sync(() => {
    m.set(op.clear, clearing);
    m.set(op.rel, relIssue);
    m.set(op.cfg, cfgIssue);
    m.set(op.enq, enqIssue);
    m.set(op.serve, serveIssue);
    m.set(opQp, lookupQp);
    m.set(opMtu, mtuOf(c.cfg.mulpdu));
    m.set(opMsn, c.cfg.initialMsn);
    m.set(opHold, c.cfg.hold);
    m.set(relValid, relNext);
    m.set(relQp, c.release.qp);
    m.set(blocked, clearing.and(clearIdx.ne(N - 1)).or(relNext));
    m.set(unheld, unheld.add(unheldIn).sub(unheldOut));
    m.when(clearing, () => {
      m.set(clearIdx, clearIdx.add(1));
      m.when(clearIdx.eq(N - 1), () => m.set(clearing, 0));
    });
    m.when(enqIssue.or(serveIssue), () => m.set(preferEnq, serveIssue));
    m.set(credits, creditsNext);
    m.set(creditOk, creditsNext.ne(0));
    m.set(srvValid, serveOk);
    m.set(creditBack, op.serve.and(serveOk.not()));
    // The write-back of this cycle is in the RAM for any later lookup, not for this cycle's.
    m.set(fwdHit, fwdNow.and(opAny));
    m.set(fwdData, next);
    m.set(srvQp, opQp);
  });
  m.assign(c.wr.ready, inq.full.not().and(clearing.not()));

  return {
    valid: srvValid,
    wr: WORK_REQUEST.view(entry.wr, { m, prefix: 'srv_wr' }),
    qp: srvQp,
    msn: entry.msn,
    mtu: entry.mtu,
    // A release in flight (registered, or looked up) is about to count its QP's ring as unheld.
    idle: clearing.not().and(inq.empty).and(unheld.eq(0)).and(relValid.not()).and(op.rel.not()).and(srvValid.not()),
  };
}
