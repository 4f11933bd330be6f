import { type Expr, cat, lit, mux } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { contextMemory } from '../lib/context';
import { bramFifo } from '../lib/fifo-bram';
import { type Ram, indexBits, ram } from '../lib/ram';
import { record } from '../lib/record';
import { IRRQ_ATOMIC } from './records';

/**
 * The queues of ddp_rx_ctl_q<N> that live beside its per-QP context (ddp-rx-ctl.ts): each QP's
 * posted receive buffers and ORQ as rings in one RAM each, and the IRRQ of every QP as one queue
 * in arrival order with its consumer side (the head stage rdmap_tx_resp takes requests from).
 */

/** The rings of N QPs in one RAM, `depth` entries each: slot s of QP q at {q, s}. */
export interface QpRings {
  readonly ram: Ram;
  /** The address of slot `slot` of QP `qp`. */
  at(qp: Expr, slot: Expr): Expr;
}

export function qpRings(m: ModuleBuilder, name: string, o: { readonly qps: number; readonly depth: number; readonly width: number; readonly doc: string }): QpRings {
  const n = Math.max(o.qps, 2);
  const r = ram(m, name, { width: o.width, depth: n * o.depth, latency: 1, doc: o.doc });
  const qb = indexBits(n);
  return { ram: r, at: (qp, slot) => cat(qp.width === qb ? qp : qp.zext(qb), slot) };
}

/** Kinds of a response request (resp_req.kind, rdmap_tx_resp req_kind). */
export const RESP_REQ_KIND = Object.freeze({ READ_RESPONSE: 0, ATOMIC: 1, TERMINATE: 2 });

/** The Terminate a QP sends (RFC 5040 §4.8; spec/ddp-rdmap.md §2.4, §8): its error and the copies it carries. */
export const TERMINATE_REQ = record('terminate_req', {
  layer: { width: 4, doc: 'Terminate Layer' },
  etype: { width: 4, doc: 'Error Type' },
  code: { width: 8, doc: 'Error Code' },
  m: { width: 1, doc: 'M: the DDP Segment Length is valid' },
  d: { width: 1, doc: 'D: the DDP header is copied' },
  r: { width: 1, doc: 'R: the RDMA header (of a Read Request) is copied' },
  seg_len: { width: 16, doc: 'DDP Segment Length of the ULPDU in error' },
  tagged: { width: 1, doc: 'the copied DDP header is tagged (14 octets, else 18)' },
  ddp_hdr: { width: 18 * 8, doc: 'the copied DDP header, octet j in [8j+7:8j]' },
  rdma_hdr: { width: 28 * 8, doc: 'the copied RDMA header, octet j in [8j+7:8j]' },
});

/** Bits of a request's body: an IRRQ entry (irrq_atomic / irrq_read) or a Terminate. */
export const RESP_BODY_BITS = Math.max(IRRQ_ATOMIC.width, TERMINATE_REQ.width);

/** The IRRQ's generation counter: a QP's entries pushed before its last flush or restart are stale. */
export const IRRQ_GEN_BITS = 4;

/**
 * A request for rdmap_tx_resp: a Read or Atomic Request to answer, or a Terminate, with what the
 * responder needs of its QP (the responder keeps no per-QP state).
 */
export const respReq = (qb: number) =>
  record('resp_req', {
    qp: qb,
    gen: { width: IRRQ_GEN_BITS, doc: "the QP's IRRQ generation when pushed: stale after a flush or a restart" },
    kind: { width: 2, doc: '0 Read Response, 1 Atomic Response, 2 Terminate' },
    msn: { width: 32, doc: 'Atomic Response: its MSN of QN 3; Terminate: its MSN of QN 2 (the first: one per stream)' },
    mulpdu: { width: 16, doc: "the QP's MULPDU (Read Response segments)" },
    big_endian: { width: 1, doc: "the QP's atomic targets are big-endian" },
    body: { width: RESP_BODY_BITS, doc: 'irrq_atomic / irrq_read (kinds 0 and 1) or terminate_req (kind 2), from bit 0' },
  });

export interface IrrqShared {
  /** The request offered to rdmap_tx_resp (registers): valid, and its resp_req value. */
  readonly valid: Signal;
  readonly value: Signal;
  /** A copy of the taken counts for another reader: the count of QP `index`, a cycle after `enable`. */
  taken(name: string, index: Expr, enable: Expr): Expr;
  /** The queue and its head stage hold nothing. */
  readonly idle: Expr;
  /** The queue's RAM is full (a register). */
  readonly full: Expr;
}

/**
 * The IRRQ of every QP as one queue in arrival order (a block RAM FIFO of resp_req) and its head
 * stage. An entry leaves the FIFO into `look` while its QP's current generation and taken count
 * are looked up (context memories: the lookup includes every update made up to its answer); a
 * cycle later it counts as taken for its QP, and whether its generation is stale (its QP was
 * flushed or restarted since it was pushed) is registered with it (`judged`); a cycle after that
 * it is dropped if stale, else it moves into the request register that rdmap_tx_resp takes. A
 * QP's requests in the IRRQ (ird/irrqDepth checks) are its pushes less its taken count. One
 * entry every four cycles at most, less than any response takes.
 *
 * `gen`: the control's writes of a QP's generation (flush, restart); `init`: the sweep after rst
 * that clears the generations and counts, one QP a cycle.
 */
export function irrqShared(
  m: ModuleBuilder,
  o: {
    readonly qps: number;
    readonly depth: number;
    readonly countBits: number;
    readonly push: Expr;
    readonly data: Expr;
    readonly take: Expr;
    readonly init: { readonly active: Expr; readonly index: Expr };
    readonly gen: { readonly enable: Expr; readonly index: Expr; readonly value: Expr };
  },
): IrrqShared {
  const N = Math.max(o.qps, 2);
  const qb = indexBits(N);
  const L = respReq(qb);
  const lookValid = m.reg('irrq_look_valid', 1, { reset: 0, doc: "an entry left the IRRQ; its QP's generation is being looked up" });
  const look = m.reg('irrq_look', L.width, { doc: 'that entry', record: L });
  const judgedValid = m.reg('irrq_judged_valid', 1, { reset: 0, doc: 'the entry of irrq_look, its generation compared' });
  const judgedLive = m.reg('irrq_judged_live', 1, { doc: "it is of its QP's current generation" });
  const reqValid = m.reg('irrq_req_valid', 1, { reset: 0, doc: 'a request waits for rdmap_tx_resp (m_req_valid)' });
  const req = m.reg('irrq_req', L.width, { doc: 'the request offered to rdmap_tx_resp', record: L });
  const pop = m.wire('irrq_pop', 1, { doc: 'the head entry moves into irrq_look' });
  const q = bramFifo(m, 'irrq', L.width, o.depth, { push: o.push, data: o.data, pop });
  // One entry in the head stage at a time: look, judged, then req, then rdmap_tx_resp.
  m.assign(pop, q.headValid.and(lookValid.not()).and(judgedValid.not()).and(reqValid.not()));
  const head = L.view(q.head, { m, prefix: 'irrq_head' });
  const lk = L.view(look, { m, prefix: 'irrq_look' });
  const gen = contextMemory(m, 'irrq_gen', { width: IRRQ_GEN_BITS, depth: N, latency: 1, doc: "each QP's current IRRQ generation" });
  gen.lookup(head.qp, pop);
  gen.update(o.init.active.or(o.gen.enable), mux(o.init.active, o.init.index, o.gen.index), mux(o.init.active, lit(IRRQ_GEN_BITS, 0), o.gen.value));
  const taken = contextMemory(m, 'irrq_taken', { width: o.countBits, depth: N, latency: 1, doc: 'entries of each QP the head has taken (mod 2^bits)' });
  taken.lookup(head.qp, pop);
  const live = m.let('irrq_look_live', lk.gen.eq(gen.value), { doc: "the entry is of its QP's current generation" });
  const w = {
    enable: m.let('irrq_taken_write', o.init.active.or(lookValid), { doc: 'the sweep clears a count, or the head takes an entry' }),
    index: m.let('irrq_taken_index', mux(o.init.active, o.init.index, lk.qp)),
    data: m.let('irrq_taken_data', mux(o.init.active, lit(o.countBits, 0), taken.value.add(1)), { doc: "the QP's taken count with this entry" }),
  };
  taken.update(w.enable, w.index, w.data);
  m.sync(() => {
    m.set(lookValid, pop);
    m.when(pop, () => m.set(look, q.head));
    m.set(judgedValid, lookValid);
    m.set(judgedLive, live);
    m.when(o.take, () => m.set(reqValid, 0));
    m.when(judgedValid.and(judgedLive), () => {
      m.set(reqValid, 1);
      m.set(req, look);
    });
  });
  return {
    valid: reqValid,
    value: req,
    taken(name, index, enable) {
      const c = ram(m, name, { width: o.countBits, depth: N, latency: 1, doc: 'a copy of irrq_taken for another reader (same writes)' });
      c.write(w.enable, w.index, w.data);
      c.read(index, enable);
      return c.data;
    },
    idle: q.empty.and(lookValid.not()).and(judgedValid.not()).and(reqValid.not()),
    full: q.full,
  };
}

export interface OrqAsk {
  /** The ORQ entry goes to ddp_rx_ctl (its s_orq_valid). */
  readonly ask: Expr;
  /** ddp_rx_ctl took it: what waits for it may go (until `taken`). */
  readonly granted: Signal;
  /** An entry was asked for and its answer has not come. */
  readonly asked: Signal;
}

/**
 * ORD at a port that waits for it (RFC 5040 §6.1): a Read or Atomic Request (`valid`, held until
 * taken) first asks ddp_rx_ctl to enter its QP's ORQ (s_orq); ddp_rx_ctl answers a cycle after it
 * takes the entry (m_orq_ack, m_orq_ack_ok). Granted, the request may go (`granted`, until its
 * handshake `taken`); refused (its QP has ORD outstanding), it waits until one is answered
 * (m_orq_done, any QP's), then asks again, so a refused request never holds the control busy.
 */
export function orqAsk(m: ModuleBuilder, o: { readonly valid: Expr; readonly ready: Expr; readonly ack: Expr; readonly ackOk: Expr; readonly done: Expr; readonly taken: Expr }): OrqAsk {
  const asked = m.reg('orq_asked', 1, { reset: 0, doc: 'an ORQ entry is in ddp_rx_ctl, its answer to come' });
  const granted = m.reg('orq_granted', 1, { reset: 0, doc: 'the ORQ took it: the request may go' });
  const refused = m.reg('orq_refused', 1, { reset: 0, doc: 'the ORQ refused it: it waits for an answered Read or Atomic' });
  const ask = m.let('orq_ask', o.valid.and(asked.not()).and(granted.not()).and(refused.not()), { doc: 'the ORQ entry goes to ddp_rx_ctl' });
  m.sync(() => {
    m.when(ask.and(o.ready), () => m.set(asked, 1));
    m.when(o.ack, () => {
      m.set(asked, 0);
      m.set(granted, o.ackOk);
      // One answered in the same cycle frees the room it was refused for: ask again at once.
      m.set(refused, o.ackOk.not().and(o.done.not()));
    });
    m.when(refused.and(o.done), () => m.set(refused, 0));
    m.when(o.taken, () => m.set(granted, 0));
  });
  return { ask, granted, asked };
}
