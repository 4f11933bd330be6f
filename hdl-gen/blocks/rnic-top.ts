import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { roundRobin } from '../lib/arbiter';
import { pipelineRegister } from '../lib/stage';
import { bramFifo } from '../lib/fifo-bram';
import { indexBits } from '../lib/ram';
import { fifo } from '../lib/fifo';
import { oneHotMux } from '../lib/onehot';
import { portGroup } from '../lib/ports';
import { record } from '../lib/record';
import type { DdpRxOptions } from './ddp-rx';
import { RX_EVENT, ddpRxCtlInitCycles, ddpRxCtlModule } from './ddp-rx-ctl';
import { orqAsk } from './ddp-rx-ctl-queues';
import { ddpRxHdrModule } from './ddp-rx-hdr';
import { ddpRxPlaceModule } from './ddp-rx-place';
import { WR_KIND, ddpTxModule } from './ddp-tx';
import { MPA_RX_VERDICT, mpaRxModule } from './mpa-rx';
import { mpaTxModule } from './mpa-tx';
import { rdmapTxRespModule } from './rdmap-tx-resp';
import { CQ_ENTRY, MPA_TX_ULPDU, QP_CFG, QP_RX_CFG, RX_EVENT_FIELDS } from './records';
import { checkRnicWidth } from './rnic-widths';
import { STAG_TABLE_DEPTH, stagTableModule } from './stag-table';
import { ulpduReasmInitCycles, ulpduReasmModule } from './ulpdu-reasm';

/**
 * The RNIC datapath for N QPs, N TCP connections: one block of each kind serves every QP, each
 * keeping what it needs of a QP in a context memory:
 *
 *   s_axis (tid = QP) → mpa_rx → ulpdu_reasm → ddp_rx_hdr ─descriptors─→ ddp_rx_ctl ─IRRQ─→ rdmap_tx_resp ─┐
 *                       (whole ULPDUs)           └─payload→ ddp_rx_place ←─commands─┘  (responses)        │
 *   wr_* (wr_qp)      → ddp_tx (the requester, tid = QP) ──────────────────────────────→ ULPDUs ──────────┴→ round-robin
 *                                                        → mpa_tx → m_axis (tid = QP)
 *   every reader's and writer's memory accesses → one mem_rd / mem_wr port; events → one completion queue (m_cq)
 *
 * - Configuration port: cfg_valid with cfg_qp loads that QP's context (the cfg_* fields) into
 *   every block that keeps one (mpa_rx, ulpdu_reasm, ddp_rx_ctl, ddp_tx, mpa_tx), taken with
 *   cfg_ready (0 for rnicTopInitCycles after rst: the blocks' init sweeps; then 0 only in the cycle
 *   after a first-FPDU completion, which releases its QP in ddp_tx):
 *   a new connection on that QP. Load it while the QP is idle or held by its fence: in the middle
 *   of an FPDU the restart would cut it short. Receive buffers and work requests go to the QP
 *   their *_qp names.
 * - Work requests: one requester for every QP (ddp_tx_w<W>_q<max(N, 2)>: per-QP rings, MSNs and
 *   MULPDU in RAM, a round-robin scheduler over the QPs with work, switching at work-request
 *   boundaries; ddp-tx-sched.ts). A fenced QP is loaded held there (cfg_hold) and skipped by
 *   its scheduler without holding the others, until its first-FPDU completion releases it; the
 *   host gives a fenced QP at most DDP_TX_RING work requests before its first FPDU (more would wait
 *   in the requester's input and hold back every QP's). A Read or Atomic enters its QP's ORQ in
 *   ddp_rx_ctl before the requester takes it; while the QP has ORD of them outstanding (or its
 *   ORQ is full) the work request waits at wr_ready, and those behind it with it: ORD is never
 *   exceeded (RFC 5040 §6.1).
 * - One STag table for the RNIC (stag_table_d<depth>), as in the model (ts-model/rnic/rnic.ts):
 *   an STag belongs to a protection domain, not to a QP; ddp_rx_ctl looks up every QP's STags
 *   in it and the stream check T2 compares the STag's PD with the receiving QP's cfg_pd
 *   (spec/ddp-rdmap.md §5.3, 0x1/0x1/0x02). stag_cfg_* registers and invalidates entries
 *   (cfg_enable), taken with stag_cfg_ready; a QP's restart leaves them.
 * - The network ports carry each connection's in-order TCP payload, tid naming the QP: s_axis
 *   packets (TCP segments, whole) go into one mpa_rx, which keeps each QP's receive state between
 *   its segments in a context memory. Its ULPDU beats, interleaved by segment, are made whole
 *   again by ulpdu_reasm (a page pool in block RAM), and each whole ULPDU goes through one
 *   ddp_rx_hdr (with its QP's cfg_rfc7306): its descriptor, with its QP and MPA verdict, to
 *   ddp_rx_ctl (every QP's DDP/RDMAP state in block RAM), its payload into one ddp_rx_place,
 *   which takes its command from ddp_rx_ctl (in payload order) and writes it to host memory.
 *   ddp_rx_ctl's IRRQ (every QP's, in arrival order) feeds one rdmap_tx_resp; its responses and
 *   the requester's ULPDUs go round-robin, whole, into one mpa_tx (tid = QP, tuser = the ULPDU's
 *   length), which keeps each QP's framing context (cfg_tx_*, cfg_crc, then the marker phase
 *   each FPDU leaves) in a context memory and sends one FPDU per m_axis packet.
 * - m_cq: ddp_rx_ctl's events (completions, Terminates, closure), `first FPDU` (kind 8: a QP
 *   configured with cfg_fence has received its first FPDU and may send, RFC 6581 §3) and `sent`
 *   (kind 7: a work request's last ULPDU has gone to mpa_tx), with cq_qp; events first, then
 *   first FPDU, then sent, but an entry offered stays until taken.
 * - Status of one QP: stat_qp in, stat_* two cycles later; `idle` and `rx_idle` for the RNIC.
 * - Host memory: W-octet beats; reads return in order and are routed back by a FIFO of owners.
 */
export const CQ_SENT = 7;

/** Completion-queue kinds (CQ_ENTRY.kind): ddp_rx_ctl's events, `sent`, and a fenced QP's first FPDU received. */
export const CQ_KIND = Object.freeze({ ...RX_EVENT, SENT: CQ_SENT, FIRST_FPDU: 8 });

export const MAX_QPS = 16384;

/**
 * Cycles after rst before cfg_ready: the longest of the init sweeps behind it (the requester's
 * and ddp_rx_ctl's contexts, one a cycle per QP; ulpdu_reasm's contexts and free pages).
 */
export const rnicTopInitCycles = (bytes: number, qps: number): number => Math.max(Math.max(qps, 2), ddpRxCtlInitCycles(qps), ulpduReasmInitCycles(bytes, qps));

/**
 * Reads in flight on the memory port, bounded by its FIFO of owners (full holds the arbiter). The
 * port returns at most a beat per cycle, so this many cover a read latency of as many cycles at
 * full rate, whoever asked: 512 is twice a PCIe host's latency at 250 MHz, and as deep as the
 * read FIFOs of ddp_tx and rdmap_tx_resp together.
 */
export const READ_OWNERS_DEPTH = 512;

/** ULPDUs between ulpdu_reasm and their descriptor (ddp_rx_hdr holds one being checked, one in its output). */
const RX_TAGS = 4;

/** A beat into mpa_tx as the top's skid buffer holds it: the stream's fields, and the ULPDU length of a first beat. */
const TX_BEAT = (W: number, qb: number) =>
  record('rnic_tx_beat', { tdata: W * 8, tkeep: W, tlast: 1, ulpdu_length: MPA_TX_ULPDU.field('ulpdu_length').width, tid: qb });

/** `sent` completions waiting for m_cq (more hold the requester's output). */
const SENT_QUEUE = 64;

export function rnicTopModule(bytes: number, qps = 2, opts: DdpRxOptions = {}): Module {
  checkRnicWidth('rnic_top', bytes);
  if (!Number.isInteger(qps) || qps < 1 || qps > MAX_QPS) throw new RangeError(`rnic_top has 1 to ${MAX_QPS} QPs, got ${qps}`);
  const W = bytes;
  const N = qps;
  const qb = indexBits(N);
  // The blocks' QP indices: ddp_rx_ctl, rdmap_tx_resp and ddp_tx serve at least two (one code path
  // with one QP: QP 1 is never used).
  const NB = Math.max(N, 2);
  const bb = indexBits(NB);
  const ctl = ddpRxCtlModule({ ...opts, qps: NB });
  const resp = rdmapTxRespModule(W, NB);
  const requester = ddpTxModule(W, { qps: NB });
  const mpa = mpaTxModule(W, { qps: N });
  const deframer = mpaRxModule(W, { qps: N });
  const reasm = ulpduReasmModule(W, { qps: N });
  const hdr = ddpRxHdrModule(W);
  const place = ddpRxPlaceModule(W, opts.fifoBytes);
  const stags = stagTableModule(opts.stagDepth ?? STAG_TABLE_DEPTH);
  const m = new ModuleBuilder(
    `rnic_top_w${W}`,
    `The iWARP RNIC datapath, ${N} QP${N > 1 ? 's' : ''}, ${W} octets per beat: per QP, MPA (RFC 5044), DDP (RFC 5041) and RDMAP\n` +
      '(RFC 5040, RFC 7306) in both directions; TCP payload in and out on AXI4-Stream (tid = QP),\n' +
      'work requests, a completion queue, one host-memory read port and one write port.',
    { bytes: W, qps: N },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  /** A top-level QP index as a block's (blocks serve at least two QPs). */
  const toBlock = (q: Expr): Expr => (q.width === bb ? q : q.zext(bb));
  /** A block's QP index as the top's. */
  const fromBlock = (q: Expr): Expr => (q.width === qb ? q : q.slice(qb - 1, 0));
  const c = m.wiresLike(ctl, 'ctl');
  const r = m.wiresLike(resp, 'resp');
  const t = m.wiresLike(requester, 'requester');
  const f = m.wiresLike(mpa, 'framer');

  // ---- configuration port: a QP's context, loaded into every block that keeps one -------------------
  const cg = "Configuration port: cfg_valid loads QP cfg_qp's context and restarts it (a new connection)";
  const cfgValid = m.input('cfg_valid', 1, { group: cg });
  const cfgQp = m.input('cfg_qp', qb, { group: cg });
  const cfgReady = m.output('cfg_ready', 1, { group: cg, doc: 'a context can be loaded: low for the init sweeps after rst (rnicTopInitCycles) and in the cycle after a first-FPDU completion' });
  const cfgTaken = m.let('cfg_taken', cfgValid.and(cfgReady));
  // ddp_rx_ctl takes the context first, and the other blocks once it is in the QP's record
  // (m_cfg_done): what they start for the new connection (a work request's ULPDUs) then finds the
  // QP's new record there (not stopped), never the last connection's.
  const cfgInCtl = m.reg('cfg_in_ctl', 1, { reset: 0, doc: 'ddp_rx_ctl has the context on cfg_*, not yet in its record' });
  const cfgCtlDone = m.reg('cfg_ctl_done', 1, { reset: 0, doc: "the context on cfg_* is in ddp_rx_ctl's record: the other blocks take it" });
  const cfgAsk = m.let('cfg_ctl_ask', cfgValid.and(cfgInCtl.not()).and(cfgCtlDone.not()), { doc: 'the context goes to ddp_rx_ctl' });
  m.sync(() => {
    m.when(cfgAsk.and(c.cfg_ready!), () => m.set(cfgInCtl, 1));
    m.when(c.m_cfg_done!, () => {
      m.set(cfgInCtl, 0);
      m.set(cfgCtlDone, 1);
    });
    m.when(cfgTaken, () => m.set(cfgCtlDone, 0));
  });
  // The QP's whole context, one port per field of QP_CFG (the register map stages the same fields).
  const qpCfg = portGroup(m, 'cfg', QP_CFG, 'input', cg).ports;
  m.assign(c.cfg_valid!, cfgAsk);
  m.assign(c.cfg_qp!, toBlock(cfgQp));
  for (const f of QP_RX_CFG.fields) m.assign(c[`cfg_${f.name}`]!, qpCfg[f.name as keyof typeof qpCfg]);
  // The transmit framing context (RFC 5044 §4.5, §7), loaded into mpa_tx's context memory: the
  // QP's first FPDU starts at cfg_tx_seq, every later one where the previous ended, markers
  // counted from this side's S0. Markers are negotiated per direction (the peer's M bit asks for
  // them in what this QP sends), the CRC once for both (RFC 5044 §7.1).
  const txCfg = { markers: qpCfg.tx_markers, crc: qpCfg.crc, s0: qpCfg.tx_s0, seq: qpCfg.tx_seq };
  m.assign(f.cfg_valid!, cfgTaken);
  if (N > 1) m.assign(f.cfg_qp!, cfgQp);
  for (const [n, p] of Object.entries(txCfg)) m.assign(f[`cfg_${n}`]!, p);
  // What ddp_rx_hdr needs with each ULPDU of the QP: ulpdu_reasm keeps it with the QP's context.
  const cfgRfc7306 = qpCfg.rfc7306;

  // ---- work requests: the shared requester, and the ORQ entry of a Read or Atomic -----------------
  const wrGroup = 'Work requests (wr_*; to the QP wr_qp, in send order per QP)';
  const wrValid = m.portLike(requester, 'wr_valid', 'wr_valid', wrGroup);
  const wrReady = m.portLike(requester, 'wr_ready', 'wr_ready', wrGroup);
  const wrQp = m.input('wr_qp', qb, { group: wrGroup, doc: 'the QP it is for' });
  const wr: Record<string, Signal> = {};
  for (const p of requester.ports.filter((x) => x.name.startsWith('wr_') && !['wr_valid', 'wr_ready', 'wr_qp'].includes(x.name))) {
    wr[p.name] = m.portLike(requester, p.name, p.name, wrGroup);
    m.assign(t[p.name]!, wr[p.name]!);
  }
  m.assign(t.wr_qp!, toBlock(wrQp));
  const kind = wr.wr_kind!;
  const atomic = kind.eq(lit(3, WR_KIND.ATOMIC));
  const needsOrq = m.let('wr_needs_orq', kind.eq(lit(3, WR_KIND.READ)).or(atomic), { doc: 'a Read or Atomic Request: its response is expected' });
  // A Read or Atomic first asks ddp_rx_ctl to enter its QP's ORQ, which takes it only while the QP
  // has fewer than ORD outstanding (RFC 5040 §6.1); granted, the work request goes to the
  // requester; refused, it waits (and those behind it) until an outstanding one is answered
  // (m_orq_done), then asks again. Asking costs a few cycles per Read or Atomic.
  const orq = orqAsk(m, { valid: wrValid.and(needsOrq), ready: c.s_orq_ready!, ack: c.m_orq_ack!, ackOk: c.m_orq_ack_ok!, done: c.m_orq_done!, taken: wrValid.and(wrReady) });
  const wrOk = m.let('wr_ok', needsOrq.not().or(orq.granted), { doc: 'the work request may enter the requester' });
  m.assign(t.wr_valid!, wrValid.and(wrOk));
  m.assign(wrReady, t.wr_ready!.and(wrOk));
  m.assign(c.s_orq_valid!, orq.ask);
  m.assign(c.s_orq_qp!, toBlock(wrQp));
  m.assign(c.s_orq_atomic!, atomic);
  m.assign(c.s_orq_stag!, mux(atomic, lit(32, 0), wr.wr_sink_stag!));
  m.assign(c.s_orq_to!, mux(atomic, lit(64, 0), wr.wr_sink_to!));
  m.assign(c.s_orq_size!, mux(atomic, lit(32, 0), wr.wr_len!));
  m.assign(c.s_orq_request_id!, mux(atomic, wr.wr_request_id!, lit(32, 0)));
  // The requester's per-QP context (MULPDU, the first MSN of QN 0 and QN 1, the fence) loads
  // with the QP's.
  m.assign(t.cfg_valid!, cfgTaken);
  m.assign(t.cfg_qp!, toBlock(cfgQp));
  m.assign(t.cfg_mulpdu!, qpCfg.mulpdu);
  m.assign(t.cfg_initial_msn!, qpCfg.initial_msn);

  // MPA fencing (RFC 6581 §3): a fenced QP is loaded held in the requester (cfg_hold), its work
  // requests wait there (skipped, not blocking others), and the requester releases it when
  // ddp_rx_ctl's decision on its first ULPDU (m_first) goes into m_cq. The hold is a bit of the
  // QP's context in the requester: no register here per QP.
  m.assign(t.cfg_hold!, qpCfg.fence);
  const firstFire = m.wire('cq_first_fire', 1, { doc: 'm_first is taken (into m_cq)' });
  m.assign(t.release_valid!, firstFire);
  m.assign(t.release_qp!, c.m_first_qp!);

  // Local faults: pulses to ddp_rx_ctl (it takes each into a small queue).
  const lf = 'Local faults (a local failure or an abort of one QP; a pulse each)';
  m.assign(c.inject_valid!, m.input('inject_valid', 1, { group: lf, doc: 'the next ULPDU of QP inject_qp that passes the header checks meets this local failure' }));
  m.assign(c.inject_qp!, toBlock(m.input('inject_qp', qb, { group: lf })));
  m.assign(c.inject_err!, m.portLike(ctl, 'inject_err', 'inject_err', lf));
  m.assign(c.abort_valid!, m.input('abort_req', 1, { group: lf, doc: 'the ULP aborts QP abort_qp' }));
  m.assign(c.abort_qp!, toBlock(m.input('abort_qp', qb, { group: lf })));
  m.allowUnused(c.inject_ready!, 'a pulse at a time: ddp_rx_ctl queues two');
  m.allowUnused(c.abort_ready!, 'a pulse at a time: ddp_rx_ctl queues two');

  // Posted receive buffers: straight to ddp_rx_ctl.
  const rg = 'Posted receive buffers of QN 0 (s_recv; to the QP s_recv_qp; at most rqDepth posted per QP)';
  m.assign(c.s_recv_valid!, m.portLike(ctl, 's_recv_valid', 's_recv_valid', rg));
  m.assign(m.portLike(ctl, 's_recv_ready', 's_recv_ready', rg), c.s_recv_ready!);
  m.assign(c.s_recv_qp!, toBlock(m.input('s_recv_qp', qb, { group: rg, doc: 'the QP it is for' })));
  for (const n of ['s_recv_addr', 's_recv_len']) m.assign(c[n]!, m.portLike(ctl, n, n, rg));

  // ---- the RNIC's STag table: ddp_rx_ctl's lookups and invalidates ----------------------------------
  const st = m.wiresLike(stags, 'stags');
  const stagCfgGroup = 'STag table write (stag_cfg_*; the RNIC\'s table, every QP\'s lookups)';
  for (const p of stags.ports.filter((x) => x.name.startsWith('cfg_'))) {
    const port = m.portLike(stags, p.name, `stag_${p.name}`, stagCfgGroup);
    if (p.role === 'input') m.assign(st[p.name]!, port);
    else m.assign(port, st[p.name]!);
  }
  // The table takes a lookup and an invalidate every cycle.
  for (const n of ['lk_valid', 'lk_stag', 'lk_to', 'lk_len', 'lk_right', 'lk_pd', 'inv_valid', 'inv_stag', 'inv_pd']) m.assign(st[n]!, c[n]!);
  m.assign(c.lk_ready!, lit(1, 1));
  m.assign(c.inv_ready!, lit(1, 1));
  m.assign(c.lk_rsp_valid!, st.rsp_valid!);
  m.assign(c.lk_rsp_fault!, st.rsp_fault!);
  m.assign(c.lk_rsp_address!, st.rsp_address!);
  m.assign(c.inv_rsp_valid!, st.inv_rsp_valid!);
  m.assign(c.inv_rsp_fault!, st.inv_fault!);

  // ---- network in: TCP payload, tid = QP -----------------------------------------------------------
  const ig = 'AXI4-Stream input: TCP payload of each connection, in order, whole segments (s_axis; tid = QP)';
  const d = m.wiresLike(deframer, 'deframer');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast', 'tid']) m.assign(d[`s_axis_${n}`]!, m.portLike(deframer, `s_axis_${n}`, `s_axis_${n}`, ig));
  m.assign(m.portLike(deframer, 's_axis_tready', 's_axis_tready', ig), d.s_axis_tready!);
  // The receive context of a new connection loads with the QP's: mpa_rx keeps it from then on.
  m.assign(d.cfg_valid!, cfgTaken);
  m.assign(d.cfg_qp!, cfgQp);
  m.assign(d.cfg_crc!, txCfg.crc);
  for (const [n, field] of [['cfg_markers', 'rx_markers'], ['cfg_s0', 'rx_s0'], ['cfg_seq', 'rx_seq'], ['cfg_max_ulpdu', 'max_ulpdu']] as const) m.assign(d[n]!, qpCfg[field]);
  // mpa_rx's ULPDU beats, interleaved by segment, into the reassembly (ulpdu_reasm): whole ULPDUs
  // out, one after another, each with its verdict on every beat.
  const ra = m.wiresLike(reasm, 'reasm');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast', 'tid', 'tuser']) m.assign(ra[`s_axis_${n}`]!, d[`m_axis_${n}`]!);
  m.assign(d.m_axis_tready!, ra.s_axis_tready!);
  m.assign(ra.cfg_valid!, cfgTaken);
  m.assign(ra.cfg_qp!, cfgQp);
  m.assign(ra.cfg_rfc7306!, cfgRfc7306);
  m.assign(cfgReady, cfgCtlDone.and(t.cfg_ready!).and(ra.cfg_ready!).and(f.cfg_ready!));
  const verdict = MPA_RX_VERDICT.view(ra.m_axis_tuser!, { m, prefix: 'rx_verdict' });
  const rTid = ra.m_axis_tid!;
  const ulpduOut = m.let('rx_ulpdu_out', ra.m_axis_tvalid!.and(ra.m_axis_tready!).and(ra.m_axis_tlast!), { doc: 'a whole ULPDU has gone into ddp_rx_hdr' });

  // ---- one ddp_rx_hdr for every QP: descriptors to ddp_rx_ctl, payload to ddp_rx_place --------------
  // A ULPDU's QP and MPA verdict wait in a small FIFO, one entry per ULPDU, until its descriptor
  // leaves ddp_rx_hdr (two cycles after its last beat at the earliest). The input waits while the
  // FIFO is full (a flip-flop).
  const hd = m.wiresLike(hdr, 'hdr');
  const RX_TAG = record('rnic_rx_tag', { qp: qb, bad: 1, llp_err: 8 });
  const tagPop = m.wire('rx_tag_pop', 1);
  const tags = fifo(m, 'rx_tag', RX_TAG.width, RX_TAGS, { push: ulpduOut, data: RX_TAG.pack({ qp: rTid, bad: verdict.passed.not(), llp_err: verdict.llp_err }), pop: tagPop });
  const tagsFull = m.reg('rx_tag_full', 1, { reset: 0, doc: 'the rx_tag FIFO is full' });
  const tagCount = tags.count;
  m.sync(() => m.set(tagsFull, oneHotMux([[ulpduOut.and(tagPop.not()), tagCount.eq(RX_TAGS - 1)], [tagPop.and(ulpduOut.not()), lit(1, 0)]], tagsFull)));
  for (const n of ['tdata', 'tkeep', 'tlast']) m.assign(hd[`s_axis_${n}`]!, ra[`m_axis_${n}`]!);
  m.assign(hd.s_axis_tvalid!, ra.m_axis_tvalid!.and(tagsFull.not()));
  m.assign(ra.m_axis_tready!, hd.s_axis_tready!.and(tagsFull.not()));
  // The QP's RFC 7306 setting, with every beat of its ULPDU (ddp_rx_hdr takes it with the first).
  m.assign(hd.cfg_rfc7306!, ra.m_rfc7306!);
  const tag = RX_TAG.view(tags.head, { m, prefix: 'rx_tag' });
  m.assign(c.s_desc_tdata!, hd.m_desc_tdata!);
  m.assign(c.s_desc_tvalid!, hd.m_desc_tvalid!);
  m.assign(hd.m_desc_tready!, c.s_desc_tready!);
  m.assign(c.s_desc_qp!, toBlock(tag.qp));
  m.assign(c.s_desc_mpa_bad!, tag.bad);
  m.assign(c.s_desc_mpa_code!, tag.llp_err);
  m.assign(tagPop, hd.m_desc_tvalid!.and(c.s_desc_tready!));

  // ---- one ddp_rx_place: its commands from ddp_rx_ctl, in payload order --------------------------------
  const pl = m.wiresLike(place, 'place');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast']) m.assign(pl[`s_axis_${n}`]!, hd[`m_axis_${n}`]!);
  m.assign(hd.m_axis_tready!, pl.s_axis_tready!);
  for (const n of ['valid', 'addr', 'discard']) m.assign(pl[`s_cmd_${n}`]!, c[`m_cmd_${n}`]!);
  m.assign(c.m_cmd_ready!, pl.s_cmd_ready!);
  m.assign(c.place_idle!, pl.idle!);
  m.assign(c.place_done!, pl.done!);
  m.allowUnused(d.fpdu_count!, 'a count over all QPs');
  m.allowUnused(c.err_recv_full!, 'the host keeps at most rqDepth buffers posted per QP');

  // ---- the responder: ddp_rx_ctl's IRRQ in, responses out ---------------------------------------------
  for (const p of ctl.ports.filter((x) => x.name.startsWith('m_req_'))) {
    const n = p.name.replace(/^m_req_/, 'req_');
    if (p.role === 'output') m.assign(r[n]!, c[p.name]!);
    else m.assign(c[p.name]!, r[n]!);
  }

  // ---- network out: responses and work-request ULPDUs, whole and round-robin, into the shared mpa_tx --
  // Input 0: the responder (Read/Atomic Responses, Terminate); input 1: the requester
  // (work-request ULPDUs). A work-request ULPDU of a QP that has sent or received a Terminate
  // (stopped) is drained here, never framed: nothing follows a Terminate (RFC 5040 §7.1); one
  // already going into mpa_tx is finished, so the FPDU stays whole. Whether the QP of the
  // requester's message is stopped is looked up in ddp_rx_ctl (chk_qp, two cycles) while the
  // message's QP is on m_axis_tid, and a stop of that QP since (m_stopped) counts too: a new
  // message of another QP waits two cycles for its answer.
  const sentFull = m.wire('cq_sent_full', 1, { doc: 'the queue of sent completions is full: the requester waits' });
  const tQp = m.let('requester_qp', fromBlock(t.m_axis_tid!), { doc: "the QP of the requester's message" });
  m.assign(c.chk_qp!, t.m_axis_tid!);
  const chkQp = [m.reg('tx_chk_qp_d1', qb), m.reg('tx_chk_qp_d2', qb)];
  const stopSeen = m.reg('tx_stop_seen', 1, { reset: 0, doc: 'requester_qp stopped since its lookup (m_stopped), until its next connection' });
  const known = m.let('tx_chk_known', chkQp[0]!.eq(tQp).and(chkQp[1]!.eq(tQp)), { doc: 'chk_tx_stopped answers for requester_qp' });
  m.sync(() => {
    m.set(chkQp[0]!, tQp);
    m.set(chkQp[1]!, chkQp[0]!);
    // Cleared by another QP, or by a new connection of this one.
    const renewed = cfgTaken.and(cfgQp.eq(tQp));
    m.set(stopSeen, chkQp[0]!.eq(tQp).and(renewed.not()).and(stopSeen.or(c.m_stopped!.and(fromBlock(c.m_stopped_qp!).eq(tQp)))));
  });
  const wrMid = m.reg('tx_wr_mid', 1, { reset: 0, doc: 'a work-request ULPDU is part-way into mpa_tx' });
  const wrStopped = m.let('tx_wr_stopped', c.chk_tx_stopped!.or(stopSeen), { doc: "the requester's QP sends nothing more" });
  const wrLive = m.let('tx_wr_live', wrMid.or(known.and(wrStopped.not())), { doc: "the requester's ULPDU may go to mpa_tx" });
  const drop = m.let('tx_drop', t.m_axis_tvalid!.and(wrMid.not()).and(known).and(wrStopped).and(sentFull.not()), { doc: "a work-request beat after its QP's Terminate: discarded" });
  const txArb = roundRobin(m, 'tx_arb', [r.m_axis_tvalid!, t.m_axis_tvalid!.and(wrLive).and(sentFull.not())]);
  const fromRequester = txArb.sel(1);
  const txQp = m.let('tx_qp', mux(fromRequester, tQp, fromBlock(r.m_axis_tid!)), { doc: 'the QP of the ULPDU going into mpa_tx' });
  // The arbitrated beat goes to mpa_tx through a skid buffer (verilog-axis axis_register,
  // REG_TYPE 2): the stopped check, the grant and the source mux end at a register, not inside
  // mpa_tx's input stage, and mpa_tx's s_axis_tready reaches no source. A cycle of latency, a
  // beat per cycle. tuser: the ULPDU's length with its first beat (octets from this beat on); the
  // rest of the framing is the QP's context in mpa_tx.
  const txBeat = TX_BEAT(W, qb);
  const txLast = m.let('tx_last', txArb.pick([r.m_axis_tlast!, t.m_axis_tlast!]), { doc: "the granted source's tlast" });
  const txIn = pipelineRegister(m, 'tx_in', {
    valid: txArb.valid,
    data: txBeat.pack({
      tdata: txArb.pick([r.m_axis_tdata!, t.m_axis_tdata!]),
      tkeep: txArb.pick([r.m_axis_tkeep!, t.m_axis_tkeep!]),
      tlast: txLast,
      ulpdu_length: txArb.pick([r.m_axis_tuser!, t.m_axis_tuser!]),
      tid: txQp,
    }),
  }, { skid: true, doc: 'the ULPDU beat into mpa_tx' });
  const tb = txBeat.view(txIn.out.data, { m, prefix: 'tx_in_beat' });
  for (const n of ['tdata', 'tkeep', 'tlast'] as const) m.assign(f[`s_axis_${n}`]!, tb[n]);
  m.assign(f.s_axis_tuser!, MPA_TX_ULPDU.pack({ ulpdu_length: tb.ulpdu_length }));
  m.assign(f.s_axis_tvalid!, txIn.out.valid);
  if (N > 1) m.assign(f.s_axis_tid!, tb.tid);
  else m.allowUnused(m.let('tx_in_tid', txBeat.get(txIn.out.data, 'tid')), 'one QP: mpa_tx has no tid');
  m.assign(txIn.out.ready, f.s_axis_tready!);
  m.assign(r.m_axis_tready!, txArb.sel(0).and(txIn.ready));
  m.assign(t.m_axis_tready!, fromRequester.and(wrLive).and(sentFull.not()).and(txIn.ready).or(drop));
  const txFire = m.let('tx_fire', txArb.valid.and(txIn.ready), { doc: 'a beat of the granted source goes into the skid buffer' });
  m.sync(() => m.when(txFire.and(fromRequester), () => m.set(wrMid, txLast.not())));
  const og = 'AXI4-Stream output: TCP payload of each connection, whole FPDUs (m_axis; tid = QP)';
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast']) m.assign(m.portLike(mpa, `m_axis_${n}`, `m_axis_${n}`, og), f[`m_axis_${n}`]!);
  m.assign(f.m_axis_tready!, m.portLike(mpa, 'm_axis_tready', 'm_axis_tready', og));
  const mTid = m.output('m_axis_tid', qb, { group: og, doc: 'the QP (connection) of this FPDU' });
  m.assign(mTid, N > 1 ? f.m_axis_tid! : lit(1, 0));

  // ---- completion queue -----------------------------------------------------------------------------
  const qg = 'Completion queue (m_cq): events of every QP, work requests sent (kind 7), first FPDU of a fenced QP (kind 8)';
  const cqValid = m.output('m_cq_valid', 1, { group: qg });
  const cqReady = m.input('m_cq_ready', 1, { group: qg });
  const cqQp = m.output('m_cq_qp', qb, { group: qg });
  // The requester's `sent` pulses (a work request's last ULPDU has gone) have no ready: they wait
  // in a queue of QPs, and the requester's output waits while it is full.
  const sentPop = m.wire('cq_sent_pop', 1);
  const sentQ = bramFifo(m, 'cq_sent', qb, SENT_QUEUE, { push: t.m_sent_valid!, data: fromBlock(t.m_sent_qp!), pop: sentPop });
  m.assign(sentFull, sentQ.full);
  // Events first, then the first-FPDU completion, then sent; but an entry m_cq offers stays until
  // the host takes it (valid/ready): an event decided while a first-FPDU or sent completion waits
  // goes after it. Switching under a waiting entry would also let an AXI4 wrapper's write fence,
  // which marks the writes before an entry when it appears, pass the new one without waiting for
  // its data (rnic-top-axi-mem.ts).
  const evtValid = c.m_evt_valid!;
  const firstValid = c.m_first_valid!;
  const held = m.reg('cq_held', 1, { reset: 0, doc: 'm_cq offered an entry in the last cycle that was not taken: the same source again' });
  const heldEvt = m.reg('cq_held_evt', 1, { doc: 'the entry held on m_cq is an event' });
  const heldFirst = m.reg('cq_held_first', 1, { doc: 'the entry held on m_cq is the first-FPDU completion' });
  const evtHere = m.let('cq_evt_here', mux(held, heldEvt, evtValid), { doc: 'an event goes next' });
  const firstHere = m.let('cq_first_here', mux(held, heldFirst, firstValid.and(evtValid.not())), { doc: 'the first-FPDU completion goes next (after events)' });
  const sentHere = m.let('cq_sent_here', mux(held, heldEvt.or(heldFirst).not(), sentQ.headValid.and(evtValid.not()).and(firstValid.not())), { doc: 'a sent completion goes next' });
  m.assign(cqValid, mux(held, evtHere.and(evtValid).or(firstHere.and(firstValid)).or(sentHere.and(sentQ.headValid)), evtValid.or(firstValid).or(sentQ.headValid)));
  m.sync(() => {
    m.set(held, cqValid.and(cqReady.not()));
    m.set(heldEvt, evtHere);
    m.set(heldFirst, firstHere);
  });
  m.assign(cqQp, mux(evtHere, fromBlock(c.m_evt_qp!), mux(firstHere, fromBlock(c.m_first_qp!), sentQ.head)));
  const evt = RX_EVENT_FIELDS.view(cat(...RX_EVENT_FIELDS.fields.slice().reverse().map((x) => c[`m_evt_${x.name}`]!)), { m, prefix: 'cq_evt' });
  const kb = CQ_ENTRY.field('kind').width;
  const txKind = mux(firstHere, lit(kb, CQ_KIND.FIRST_FPDU), lit(kb, CQ_KIND.SENT));
  const entry = mux(evtHere, CQ_ENTRY.pack({ kind: evt.kind.zext(kb), length: evt.length, solicited: evt.solicited, invalidated: evt.invalidated, stag: evt.stag, data: evt.data, err: evt.err }), CQ_ENTRY.update(CQ_ENTRY.zero(), { kind: txKind }));
  portGroup(m, 'm_cq', CQ_ENTRY, 'output', qg).drive(entry);
  m.assign(c.m_evt_ready!, cqReady.and(evtHere));
  m.assign(c.m_first_ready!, cqReady.and(firstHere));
  m.assign(firstFire, firstValid.and(cqReady).and(firstHere));
  m.assign(sentPop, sentHere.and(cqReady));

  // ---- host memory --------------------------------------------------------------------------------
  const wg = 'Host memory write (W-aligned beats with strobes)';
  // Writers: the responder's atomic write-back (0), ddp_rx_place (1).
  const wrArb = roundRobin(m, 'mem_wr_arb', [r.wr_valid!, pl.wr_valid!]);
  for (const n of ['addr', 'data', 'strb']) m.assign(m.portLike(resp, `wr_${n}`, `mem_wr_${n}`, wg), wrArb.pick([r[`wr_${n}`]!, pl[`wr_${n}`]!]));
  m.assign(m.portLike(resp, 'wr_valid', 'mem_wr_valid', wg), wrArb.valid);
  const memWrReady = m.portLike(resp, 'wr_ready', 'mem_wr_ready', wg);
  m.assign(r.wr_ready!, wrArb.sel(0).and(memWrReady));
  m.assign(pl.wr_ready!, wrArb.sel(1).and(memWrReady));
  const memWrFire = m.let('mem_wr_fire', wrArb.valid.and(memWrReady));

  const rdg = 'Host memory read (W-aligned beats; data in order, always accepted)';
  const ownersFull = m.wire('mem_rd_owners_full', 1);
  // Readers: the responder (0), the requester (1).
  const rdArb = roundRobin(m, 'mem_rd_arb', [r.rd_valid!, t.rd_valid!].map((v) => v.and(ownersFull.not())));
  m.assign(m.portLike(resp, 'rd_addr', 'mem_rd_addr', rdg), rdArb.pick([r.rd_addr!, t.rd_addr!]));
  m.assign(m.portLike(resp, 'rd_valid', 'mem_rd_valid', rdg), rdArb.valid);
  const memRdReady = m.portLike(resp, 'rd_ready', 'mem_rd_ready', rdg);
  const rdDataValid = m.portLike(resp, 'rd_data_valid', 'mem_rd_data_valid', rdg);
  const rdData = m.portLike(resp, 'rd_data', 'mem_rd_data', rdg);
  const rdFire = m.let('mem_rd_fire', rdArb.valid.and(memRdReady));
  // The port returns a beat per cycle at most: as many reads in flight as one reader may have
  // cover the same latency for both (READ_OWNERS_DEPTH).
  const owners = fifo(m, 'mem_rd_owners', 1, READ_OWNERS_DEPTH, { push: rdFire, data: rdArb.index, pop: rdDataValid });
  m.assign(ownersFull, owners.full);
  m.assign(r.rd_ready!, rdArb.sel(0).and(memRdReady).and(ownersFull.not()));
  m.assign(r.rd_data_valid!, rdDataValid.and(owners.head.eq(0)));
  m.assign(r.rd_data!, rdData);
  m.assign(t.rd_ready!, rdArb.sel(1).and(memRdReady).and(ownersFull.not()));
  m.assign(t.rd_data_valid!, rdDataValid.and(owners.head.eq(1)));
  m.assign(t.rd_data!, rdData);

  m.sync(() => {
    txArb.sync(txFire, txLast);
    wrArb.sync(memWrFire, lit(1, 1));
    rdArb.sync(rdFire, lit(1, 1));
  });

  // ---- status ---------------------------------------------------------------------------------------
  const sg = 'Status: one QP (stat_qp, its answer two cycles later) and the RNIC';
  m.assign(c.stat_qp!, toBlock(m.input('stat_qp', qb, { group: sg, doc: 'the QP whose status stat_* give two cycles later' })));
  for (const n of ['stat_rx_stopped', 'stat_tx_stopped', 'stat_irrq_used', 'stat_fenced', 'stat_mpa_err']) m.assign(m.portLike(ctl, n, n, sg), c[n]!);
  // Everything received is handled and placed: nothing in mpa_rx, ulpdu_reasm, between ddp_rx_hdr
  // and ddp_rx_ctl, or in ddp_rx_place.
  const rxIdle = m.let('rx_idle_all', d.idle!.and(d.drain_busy!.not()).and(ra.idle!).and(tags.empty).and(c.idle!).and(pl.idle!), { doc: 'the receive side is idle' });
  m.allowUnused(d.ctx_qp!, 'rx_idle covers every QP');
  m.allowUnused(d.drain_qp!, 'rx_idle covers every QP');
  m.assign(m.output('rx_idle', 1, { group: sg, doc: 'every ULPDU received is handled and its placement written' }), rxIdle);
  const txIdle = m.let('tx_idle_all', c.irrq_idle!.and(r.idle!).and(sentQ.empty).and(c.m_first_valid!.not()).and(txIn.out.valid.not()), {
    doc: 'no response or completion in progress, no beat in the skid buffer before mpa_tx (mpa_tx: m_axis_tvalid)',
  });
  // The requester's idle leaves out the work requests of held (fenced) QPs: they wait for their peer.
  m.assign(m.output('idle', 1, { group: sg, doc: 'nothing in progress, but work requests a fence holds' }), rxIdle.and(txIdle).and(t.idle!).and(orq.asked.not()));
  m.assign(m.output('tx_err_length', 1, { group: sg, doc: 'sticky: mpa_tx saw a ULPDU of the wrong length (a broken block)' }), f.err_length!);

  m.instance(ctl, 'u_rx_ctl', { clk, rst, ...c });
  m.instance(resp, 'u_responder', { clk, rst, ...r });
  m.instance(stags, 'u_stags', { clk, rst, ...st });
  m.instance(requester, 'u_requester', { clk, rst, ...t });
  m.instance(deframer, 'u_mpa_rx', { clk, rst, ...d });
  m.instance(reasm, 'u_reasm', { clk, rst, ...ra });
  m.instance(hdr, 'u_ddp_rx_hdr', { clk, rst, ...hd });
  m.instance(place, 'u_ddp_rx_place', { clk, rst, ...pl });
  m.instance(mpa, 'u_mpa_tx', { clk, rst, ...f });
  return m.build();
}
