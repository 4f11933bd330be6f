import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { pickByIndex, roundRobin } from '../lib/arbiter';
import { indexBits } from '../lib/ram';
import type { DdpRxOptions } from './ddp-rx';
import { RX_EVENT } from './ddp-rx-ctl';
import { CQ_ENTRY, MPA_TX_CTX, RX_EVENT_FIELDS } from './records';
import { portGroup } from '../lib/ports';
import { fifo } from '../lib/fifo';
import { MPA_RX_VERDICT, mpaRxModule } from './mpa-rx';
import { mpaTxModule } from './mpa-tx';
import { rnicQpModule } from './rnic-qp';
import { WR_KIND, ddpTxModule } from './ddp-tx';
import { DDP_TX_RING } from './ddp-tx-sched';
import { ddpRxHdrModule } from './ddp-rx-hdr';
import { ddpRxPlaceModule } from './ddp-rx-place';
import { DDP_RX_DESC } from './records';
import { record } from '../lib/record';
import { oneHotMux } from '../lib/onehot';
import { checkRnicWidth } from './rnic-widths';
import { sharedServer } from '../lib/shared-server';
import { STAG_TABLE_DEPTH, STAG_TABLE_LATENCY, stagTableModule } from './stag-table';
import { REASM_PAGE_BEATS, REASM_POOL_BYTES, ulpduReasmInitCycles, ulpduReasmModule } from './ulpdu-reasm';

/**
 * The RNIC datapath for N QPs, N TCP connections; what each QP has alone (its receive control and
 * responder) is an `rnic_qp_w<W>`, every other block serves all QPs:
 *
 *   s_axis (tid = QP) → mpa_rx → ulpdu_reasm → ddp_rx_hdr ─descriptors─→ QP i: ddp_rx_ctl → responder ─┐
 *                       (whole ULPDUs)           └─payload→ ddp_rx_place ←─commands─┘ (placement)     │
 *   wr_* (wr_qp)      → ddp_tx (the requester, tid = QP) ──────────────────────────→ ULPDUs ──────────┴→ round-robin
 *                                                        → mpa_tx → m_axis (tid = QP)
 *   every reader's and writer's memory accesses → one mem_rd / mem_wr port; events → one completion queue (m_cq)
 *
 * - Configuration port: cfg_valid with cfg_qp loads that QP's context (the cfg_* fields), taken
 *   with cfg_ready (0 for rnicTopInitCycles after rst: the requester's and ulpdu_reasm's init
 *   sweeps), and restarts it (a one-cycle reset of its rnic_qp; the requester restarts its MSNs,
 *   ulpdu_reasm drops its open ULPDU): a new connection on that QP.
 *   Load it while the QP is idle or held by its fence (qp_idle or qp_fenced): in the middle of an
 *   FPDU the restart would cut it short. Receive buffers and work requests go to the QP their
 *   *_qp names.
 * - Work requests: one requester for every QP (ddp_tx_w<W>_q<max(N, 2)>: per-QP rings, MSNs and
 *   MULPDU in RAM, a round-robin scheduler over the QPs with work, switching at work-request
 *   boundaries; ddp-tx-sched.ts). A fenced QP (qp_fenced) is skipped by its scheduler without
 *   holding the others. A Read or Atomic enters its QP's ORQ as the requester takes it.
 * - One STag table for the RNIC (stag_table_d<depth>), as in the model (ts-model/rnic/rnic.ts):
 *   an STag belongs to a protection domain, not to a QP, so every QP looks up the same table and
 *   the stream check T2 compares the STag's PD with the receiving QP's cfg_pd (spec/ddp-rdmap.md
 *   §5.3, 0x1/0x1/0x02). stag_cfg_* registers and invalidates entries (cfg_enable), taken with
 *   stag_cfg_ready (0 through the table's init sweep after reset, stagDepth cycles, and for the
 *   cycle in which an invalidate may write its clear); a QP's restart leaves them (the host
 *   deregisters what it no longer wants reachable). The QPs' lookups and invalidates take turns,
 *   round-robin, one each a cycle (a QP waits in its ddp_rx_ctl's LOOK or INV while another is
 *   served: a cycle per QP ahead of it).
 * - The network ports carry each connection's in-order TCP payload, tid naming the QP: s_axis
 *   packets (TCP segments, whole) go into one mpa_rx, which keeps each QP's receive state between
 *   its segments in a context memory (a segment of another QP costs a context switch, 2
 *   cycles). Its ULPDU beats, interleaved by segment, are made whole again by ulpdu_reasm (a
 *   page pool in block RAM), and each whole ULPDU goes through one ddp_rx_hdr (with its QP's
 *   cfg_rfc7306): its descriptor, with its QP and MPA verdict, to that QP's ddp_rx_ctl, its
 *   payload into one ddp_rx_place, which takes each payload's command from its QP's ddp_rx_ctl
 *   (in payload order) and writes it to host memory; each QP counts its placements not yet
 *   written (its place_idle: a Read or Atomic Request waits for them). The QPs' responses and the
 *   requester's
 *   ULPDUs go round-robin, whole, into one mpa_tx, with their QP's framing context (cfg_tx_*,
 *   cfg_crc, and whether an FPDU of the QP has gone before), which keeps each QP's marker phase
 *   (a context memory) and sends one FPDU per m_axis packet.
 * - m_cq: the QPs' events (ddp_rx m_evt: completions, Terminates, closure), `sent` (kind 7: a
 *   work request's last ULPDU has gone to mpa_tx) and `first FPDU` (kind 8: a QP configured with
 *   cfg_fence has received its first FPDU and may send, RFC 6581 §3), round-robin over QPs, with
 *   cq_qp; within a QP events first, then first FPDU, then sent.
 * - Host memory: W-octet beats; reads return in order and are routed back by a FIFO of owners.
 */
export const CQ_SENT = 7;

/** Completion-queue kinds (CQ_ENTRY.kind): ddp_rx's events, `sent`, and a fenced QP's first FPDU received. */
export const CQ_KIND = Object.freeze({ ...RX_EVENT, SENT: CQ_SENT, FIRST_FPDU: 8 });

export const MAX_QPS = 16;

/**
 * Cycles after rst before cfg_ready: the longest of the init sweeps behind it (the requester's
 * contexts, one a cycle per QP; ulpdu_reasm's contexts and free pages).
 */
export const rnicTopInitCycles = (bytes: number, qps: number): number => Math.max(Math.max(qps, 2), ulpduReasmInitCycles(bytes, qps));

/**
 * Reads in flight on the memory port, bounded by its FIFO of owners (full holds the arbiter). The
 * port returns at most a beat per cycle, so this many cover a read latency of as many cycles at
 * full rate, whoever asked: 512 is twice a PCIe host's latency at 250 MHz, and as deep as the
 * read FIFOs of ddp_tx and rdmap_tx_resp together.
 */
export const READ_OWNERS_DEPTH = 512;

/** ULPDUs between ulpdu_reasm and their descriptor (ddp_rx_hdr holds one being checked, one in its output). */
const RX_TAGS = 4;
/** Payloads whose command has not yet been taken: each QP's ddp_rx_ctl holds a descriptor in its input, one in hand and a command. */
const RX_CMDS = 64;

export function rnicTopModule(bytes: number, qps = 2, opts: DdpRxOptions = {}): Module {
  checkRnicWidth('rnic_top', bytes);
  if (!Number.isInteger(qps) || qps < 1 || qps > MAX_QPS) throw new RangeError(`rnic_top has 1 to ${MAX_QPS} QPs, got ${qps}`);
  const W = bytes;
  const N = qps;
  const qb = Math.max(1, Math.ceil(Math.log2(N)));
  const qp = rnicQpModule(W, opts);
  // One requester for every QP; with one QP, the two-QP one with QP 1 never used (one code path).
  const requester = ddpTxModule(W, { qps: Math.max(N, 2) });
  const mpa = mpaTxModule(W, { qps: N });
  const deframer = mpaRxModule(W, { qps: N });
  const reasm = ulpduReasmModule(W, { qps: N });
  const hdr = ddpRxHdrModule(W);
  const place = ddpRxPlaceModule(W, opts.fifoBytes);
  const reasmPages = REASM_POOL_BYTES / (REASM_PAGE_BEATS * W);
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
  const port = (name: string) => qp.ports.find((p) => p.name === name)!;
  const qpLit = (i: number) => lit(qb, i);
  /** A wire per QP for port `name` of rnic_qp. */
  const perQp = (name: string): Signal[] => Array.from({ length: N }, (_, i) => m.wire(`qp${i}_${name}`, port(name).width));
  const conns: Record<string, Expr>[] = Array.from({ length: N }, () => ({}));
  const wires: Record<string, Signal[]> = {};
  for (const p of qp.ports) {
    if (p.name === 'clk' || p.name === 'rst') continue;
    wires[p.name] = perQp(p.name);
    wires[p.name]!.forEach((w, i) => (conns[i]![p.name] = w));
  }
  const w = (name: string, i: number): Signal => wires[name]![i]!;
  /**
   * Output `name` of QP i where it reaches what the QPs share: low in the cycle the QP restarts.
   * Its new context is loaded then and its state is not yet reset, so a held work request could
   * otherwise start an FPDU that the reset cuts off.
   */
  const live = (name: string, i: number): Expr => w(name, i).and(restarting[i]!.not());
  const liveAll = (name: string): Expr[] => Array.from({ length: N }, (_, i) => live(name, i));

  // ---- configuration port: a QP's context, loaded and restarted ------------------------------------
  const cg = "Configuration port: cfg_valid loads QP cfg_qp's context and restarts it (a new connection)";
  const cfgValid = m.input('cfg_valid', 1, { group: cg });
  const cfgQp = m.input('cfg_qp', qb, { group: cg });
  const cfgReady = m.output('cfg_ready', 1, { group: cg, doc: 'a context can be loaded: low for the init sweeps after rst (rnicTopInitCycles: the requester\'s contexts, ulpdu_reasm\'s pages)' });
  const cfgTaken = m.let('cfg_taken', cfgValid.and(cfgReady));
  const cfgNames = qp.ports.filter((p) => p.name.startsWith('cfg_')).map((p) => p.name);
  const cfgIn: Record<string, Signal> = Object.fromEntries(cfgNames.map((n) => [n, m.portLike(qp, n, n, cg)]));
  // The transmit framing context (RFC 5044 §4.5, §7), what the shared mpa_tx needs with each ULPDU:
  // the QP's first FPDU starts at cfg_tx_seq, every later one where the previous ended (its
  // continue bit), markers counted from this side's S0. Markers are negotiated per direction (the
  // peer's M bit asks for them in what this QP sends), the CRC once for both (RFC 5044 §7.1).
  const txCfg = {
    tx_markers: m.input('cfg_tx_markers', 1, { group: cg, doc: 'MPA markers in what this QP sends (the peer\'s M bit)' }),
    crc: m.input('cfg_crc', 1, { group: cg, doc: 'MPA CRC, both directions (negotiated, RFC 5044 §7.1)' }),
    tx_s0: m.input('cfg_tx_s0', 9, { group: cg, doc: 'low 9 bits of this side\'s S0: where the sent markers count from' }),
    tx_seq: m.input('cfg_tx_seq', 9, { group: cg, doc: 'low 9 bits of the sequence number of the first sent octet' }),
    // And what the shared ddp_rx_hdr needs with each ULPDU of the QP.
    rfc7306: m.input('cfg_rfc7306', 1, { group: cg, doc: 'accept RFC 7306 opcodes 0x8-0xB (Immediate Data, Atomics)' }),
  };
  cfgIn.cfg_crc = txCfg.crc;
  /** Per QP: its transmit framing context and RFC 7306 setting (registers loaded with the rest of the context). */
  const txCtx: Record<keyof typeof txCfg, Signal>[] = [];
  const qpRst: Signal[] = [];
  const restarting: Signal[] = [];
  for (let i = 0; i < N; i++) {
    const load = m.let(`qp${i}_cfg_load`, cfgTaken.and(cfgQp.eq(qpLit(i))));
    const ctx = Object.fromEntries(Object.entries(txCfg).map(([n, p]) => [n, m.reg(`qp${i}_ctx_${n}`, p.width, { reset: 0, doc: `QP ${i}: ${p.doc}` })])) as Record<keyof typeof txCfg, Signal>;
    txCtx.push(ctx);
    m.sync(() => m.when(load, () => { for (const [n, p] of Object.entries(txCfg)) m.set(ctx[n as keyof typeof txCfg], p); }));
    const restart = m.reg(`qp${i}_restart`, 1, { reset: 1, doc: `QP ${i} is held in reset this cycle (system reset, or a new context)` });
    qpRst.push(m.let(`qp${i}_rst`, rst.or(restart)));
    restarting.push(restart);
    for (const n of cfgNames) {
      const reg = m.reg(`qp${i}_ctx_${n.replace(/^cfg_/, "")}`, port(n).width, { reset: 0, doc: `QP ${i}: ${port(n).doc ?? n}` });
      m.assign(w(n, i), reg);
      m.sync(() => m.when(load, () => m.set(reg, cfgIn[n]!)));
    }
    m.sync(() => m.set(restart, load));
  }

  /** A request port demuxed to the QPs: `<prefix>_valid` (`_ready`) and `<prefix>_qp` choose one. */
  const demux = (prefix: string, group: string, fields: readonly string[], ready: boolean) => {
    const valid = m.portLike(qp, `${prefix}_valid`, `${prefix}_valid`, group);
    const sel = m.input(`${prefix}_qp`, qb, { group, doc: 'the QP it is for' });
    for (const n of fields) {
      const p = m.portLike(qp, n, n, group);
      for (let i = 0; i < N; i++) m.assign(w(n, i), p);
    }
    for (let i = 0; i < N; i++) m.assign(w(`${prefix}_valid`, i), valid.and(sel.eq(qpLit(i))));
    if (ready) {
      const r = m.portLike(qp, `${prefix}_ready`, `${prefix}_ready`, group);
      m.assign(r, pickByIndex(sel, Array.from({ length: N }, (_, i) => w(`${prefix}_ready`, i))));
    }
  };
  const fieldsOf = (prefix: string) => qp.ports.filter((p) => p.name.startsWith(prefix) && !/_(valid|ready)$/.test(p.name)).map((p) => p.name);
  demux('s_recv', 'Posted receive buffers of QN 0 (s_recv; to the QP s_recv_qp)', fieldsOf('s_recv_'), true);

  // ---- work requests: the shared requester, and the ORQ entry of a Read or Atomic -----------------
  // A Read or Atomic work request enters its QP's ORQ (the Data Sink STag/TO and size, or the
  // Request Identifier) in the cycle the requester takes it, so its response is checked against it
  // (T6/T7). While the QP's ORQ has no room (cfg_ord outstanding, or full) the work request
  // waits at wr_ready, and those behind it with it: ORD is never exceeded (RFC 5040 §6.1).
  const t = m.wiresLike(requester, 'requester');
  const wrGroup = 'Work requests (wr_*; to the QP wr_qp, in send order per QP)';
  const wrValid = m.portLike(requester, 'wr_valid', 'wr_valid', wrGroup);
  const wrReady = m.portLike(requester, 'wr_ready', 'wr_ready', wrGroup);
  const wrQp = m.input('wr_qp', qb, { group: wrGroup, doc: 'the QP it is for' });
  const wr: Record<string, Signal> = {};
  for (const p of requester.ports.filter((x) => x.name.startsWith('wr_') && !['wr_valid', 'wr_ready', 'wr_qp'].includes(x.name))) {
    wr[p.name] = m.portLike(requester, p.name, p.name, wrGroup);
    m.assign(t[p.name]!, wr[p.name]!);
  }
  m.assign(t.wr_qp!, wrQp.width === t.wr_qp!.width ? wrQp : wrQp.zext(t.wr_qp!.width));
  const kind = wr.wr_kind!;
  const atomic = kind.eq(lit(3, WR_KIND.ATOMIC));
  const needsOrq = m.let('wr_needs_orq', kind.eq(lit(3, WR_KIND.READ)).or(atomic), { doc: 'a Read or Atomic Request: its response is expected' });
  const orqOk = m.let('wr_orq_ok', needsOrq.not().or(pickByIndex(wrQp, wires.s_orq_ready!)));
  // A QP has at most DDP_TX_RING work requests in the requester (taken, not yet sent), so one
  // always finds room in its ring: none waits in the requester's shared input FIFO behind a full
  // ring (a fenced QP's would hold back every QP's), and a restart, which empties the ring, leaves
  // none of the old connection's behind.
  const wrRoom = Array.from({ length: N }, (_, i) => m.reg(`qp${i}_wr_room`, 1, { reset: 1, doc: `QP ${i}: fewer than ${DDP_TX_RING} work requests in the requester` }));
  const wrOk = m.let('wr_ok', orqOk.and(pickByIndex(wrQp, wrRoom)), { doc: 'the work request may enter the requester' });
  m.assign(t.wr_valid!, wrValid.and(wrOk));
  m.assign(wrReady, t.wr_ready!.and(wrOk));
  const orqPush = m.let('wr_orq_push', wrValid.and(needsOrq).and(t.wr_ready!), { doc: 'a Read or Atomic enters its QP\'s ORQ' });
  for (let i = 0; i < N; i++) {
    m.assign(w('s_orq_valid', i), orqPush.and(wrQp.eq(qpLit(i))));
    m.assign(w('s_orq_atomic', i), atomic);
    m.assign(w('s_orq_stag', i), mux(atomic, lit(32, 0), wr.wr_sink_stag!));
    m.assign(w('s_orq_to', i), mux(atomic, lit(64, 0), wr.wr_sink_to!));
    m.assign(w('s_orq_size', i), mux(atomic, lit(32, 0), wr.wr_len!));
    m.assign(w('s_orq_request_id', i), mux(atomic, wr.wr_request_id!, lit(32, 0)));
  }
  // The requester's per-QP context (MULPDU, the first MSN of QN 0 and QN 1) loads with the QP's.
  m.assign(t.cfg_valid!, cfgTaken);
  m.assign(t.cfg_qp!, cfgQp.width === t.cfg_qp!.width ? cfgQp : cfgQp.zext(t.cfg_qp!.width));
  m.assign(t.cfg_mulpdu!, cfgIn.cfg_mulpdu!);
  m.assign(t.cfg_initial_msn!, cfgIn.cfg_initial_msn!);
  m.allowUnused(t.idle!, 'a QP is idle when none of its work requests is in flight (qp<i>_wr_out)');
  // MPA fencing: a fenced QP's work requests wait in the requester (skipped, not blocking others).
  // (With one QP the requester has two: QP 1 is never used.)
  m.assign(t.sched_hold!, pickByIndex(t.sched_qp!, N === 1 ? [w('fenced', 0), lit(1, 0)] : wires.fenced!));
  demux('inject', 'Local faults (a local failure or an abort of one QP)', ['inject_err'], false);
  const abortReq = m.input('abort_req', 1, { group: 'Local faults (a local failure or an abort of one QP)', doc: 'the ULP aborts QP abort_qp' });
  const abortQp = m.input('abort_qp', qb, { group: 'Local faults (a local failure or an abort of one QP)' });
  for (let i = 0; i < N; i++) m.assign(w('abort_req', i), abortReq.and(abortQp.eq(qpLit(i))));

  // ---- the RNIC's STag table, shared by the QPs -------------------------------------------------------
  const st = m.wiresLike(stags, 'stags');
  const stagCfgGroup = 'STag table write (stag_cfg_*; the RNIC\'s table, every QP\'s lookups)';
  // stag_cfg_* straight to the table: its fields in, cfg_ready out (stag_cfg_ready: 0 through the init sweep after reset).
  for (const p of stags.ports.filter((x) => x.name.startsWith('cfg_'))) {
    const port = m.portLike(stags, p.name, `stag_${p.name}`, stagCfgGroup);
    if (p.role === 'input') m.assign(st[p.name]!, port);
    else m.assign(port, st[p.name]!);
  }
  /** QP port stag_<op>_* to the table's <op>_*; the table's answer `valid` to the QP that asked, its other outputs (`answers`: QP field → table port) to every QP. */
  const share = (op: 'lk' | 'inv', fields: readonly string[], valid: string, answers: Record<string, string>) => {
    const srv = sharedServer(m, `stag_${op}`, liveAll(`stag_${op}_valid`), STAG_TABLE_LATENCY);
    m.assign(st[`${op}_valid`]!, srv.valid);
    for (const f of fields) m.assign(st[`${op}_${f}`]!, srv.pick(wires[`stag_${op}_${f}`]!));
    for (let i = 0; i < N; i++) {
      m.assign(w(`stag_${op}_ready`, i), srv.ready(i));
      m.assign(w(`stag_${op}_rsp_valid`, i), srv.answer(st[valid]!, i));
      for (const [f, table] of Object.entries(answers)) m.assign(w(`stag_${op}_rsp_${f}`, i), st[table]!);
    }
  };
  share('lk', ['stag', 'to', 'len', 'right', 'pd'], 'rsp_valid', { fault: 'rsp_fault', address: 'rsp_address' });
  share('inv', ['stag', 'pd'], 'inv_rsp_valid', { fault: 'inv_fault' });

  // ---- network in: TCP payload, tid = QP -----------------------------------------------------------
  const ig = 'AXI4-Stream input: TCP payload of each connection, in order, whole segments (s_axis; tid = QP)';
  const d = m.wiresLike(deframer, 'deframer');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast', 'tid']) m.assign(d[`s_axis_${n}`]!, m.portLike(deframer, `s_axis_${n}`, `s_axis_${n}`, ig));
  m.assign(m.portLike(deframer, 's_axis_tready', 's_axis_tready', ig), d.s_axis_tready!);
  // The receive context of a new connection loads with the QP's: mpa_rx keeps it from then on.
  m.assign(d.cfg_valid!, cfgTaken);
  m.assign(d.cfg_qp!, cfgQp);
  m.assign(d.cfg_crc!, cfgIn.cfg_crc!);
  for (const [n, top] of [['cfg_markers', 'cfg_rx_markers'], ['cfg_s0', 'cfg_rx_s0'], ['cfg_seq', 'cfg_rx_seq'], ['cfg_max_ulpdu', 'cfg_max_ulpdu']] as const) m.assign(d[n]!, m.portLike(deframer, n, top, cg));
  // mpa_rx's ULPDU beats, interleaved by segment, into the reassembly (ulpdu_reasm): whole ULPDUs
  // out, one after another, each with its verdict on every beat.
  const ra = m.wiresLike(reasm, 'reasm');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast', 'tid', 'tuser']) m.assign(ra[`s_axis_${n}`]!, d[`m_axis_${n}`]!);
  m.assign(d.m_axis_tready!, ra.s_axis_tready!);
  m.assign(ra.cfg_valid!, cfgTaken);
  m.assign(ra.cfg_qp!, cfgQp);
  m.assign(cfgReady, t.cfg_ready!.and(ra.cfg_ready!));
  const dTid = d.m_axis_tid!;
  const ulpduIn = m.let('rx_ulpdu_in', d.m_axis_tvalid!.and(d.m_axis_tready!).and(d.m_axis_tlast!), { doc: 'a ULPDU is complete in ulpdu_reasm' });
  const verdict = MPA_RX_VERDICT.view(ra.m_axis_tuser!, { m, prefix: 'rx_verdict' });
  const rTid = ra.m_axis_tid!;
  const ulpduOut = m.let('rx_ulpdu_out', ra.m_axis_tvalid!.and(ra.m_axis_tready!).and(ra.m_axis_tlast!), { doc: 'a whole ULPDU has gone into ddp_rx_hdr' });

  // ---- one ddp_rx_hdr for every QP: header checks, descriptors to the QPs, payload to ddp_rx_place --
  // A ULPDU's QP and MPA verdict wait in a small FIFO, one entry per ULPDU, until its descriptor
  // leaves ddp_rx_hdr (two cycles after its last beat at the earliest); the descriptor goes to
  // that QP's ddp_rx_ctl. The input waits while the FIFO is full (a flip-flop).
  const hd = m.wiresLike(hdr, 'hdr');
  const cmdsFull = m.wire('rx_cmd_qp_full', 1, { doc: 'rx_cmd_qp is full: no descriptor goes to a QP' });
  const RX_TAG = record('rnic_rx_tag', { qp: qb, bad: 1, llp_err: 8 });
  const tagPush = m.wire('rx_tag_push', 1);
  const tagPop = m.wire('rx_tag_pop', 1);
  const tags = fifo(m, 'rx_tag', RX_TAG.width, RX_TAGS, { push: tagPush, data: RX_TAG.pack({ qp: rTid, bad: verdict.passed.not(), llp_err: verdict.llp_err }), pop: tagPop });
  const tagsFull = m.reg('rx_tag_full', 1, { reset: 0, doc: 'the rx_tag FIFO is full' });
  const tagCount = tags.count;
  m.sync(() => m.set(tagsFull, oneHotMux([[tagPush.and(tagPop.not()), tagCount.eq(RX_TAGS - 1)], [tagPop.and(tagPush.not()), lit(1, 0)]], tagsFull)));
  for (const n of ['tdata', 'tkeep', 'tlast']) m.assign(hd[`s_axis_${n}`]!, ra[`m_axis_${n}`]!);
  m.assign(hd.s_axis_tvalid!, ra.m_axis_tvalid!.and(tagsFull.not()));
  m.assign(ra.m_axis_tready!, hd.s_axis_tready!.and(tagsFull.not()));
  m.assign(tagPush, ulpduOut);
  // The QP's RFC 7306 setting, taken by ddp_rx_hdr with the ULPDU's first beat.
  m.assign(hd.cfg_rfc7306!, pickByIndex(rTid, txCtx.map((c) => c.rfc7306)));
  const tag = RX_TAG.view(tags.head, { m, prefix: 'rx_tag' });
  const descQp = tag.qp;
  for (let i = 0; i < N; i++) {
    m.assign(w('s_desc_tdata', i), hd.m_desc_tdata!);
    m.assign(w('s_desc_mpa_bad', i), tag.bad);
    m.assign(w('s_desc_mpa_code', i), tag.llp_err);
    m.assign(w('s_desc_tvalid', i), hd.m_desc_tvalid!.and(cmdsFull.not()).and(descQp.eq(qpLit(i))));
  }
  m.assign(hd.m_desc_tready!, cmdsFull.not().and(pickByIndex(descQp, wires.s_desc_tready!)));
  const descFire = m.let('rx_desc_fire', hd.m_desc_tvalid!.and(hd.m_desc_tready!), { doc: 'a descriptor goes to its QP' });
  m.assign(tagPop, descFire);

  // ---- one ddp_rx_place for every QP: each payload's command from its QP's ddp_rx_ctl --------------
  // ddp_rx_ctl makes one placement command per descriptor with a payload, and the payloads enter
  // ddp_rx_place in descriptor order: a FIFO of their QPs picks which QP's m_cmd goes next.
  // Each QP counts its commands that place data until their last write is accepted (`done`,
  // in order: a second FIFO of QPs), for its place_idle.
  const pl = m.wiresLike(place, 'place');
  for (const n of ['tdata', 'tkeep', 'tvalid', 'tlast']) m.assign(pl[`s_axis_${n}`]!, hd[`m_axis_${n}`]!);
  m.assign(hd.m_axis_tready!, pl.s_axis_tready!);
  const cmdPush = m.let('rx_cmd_push', descFire.and(DDP_RX_DESC.view(hd.m_desc_tdata!, { m, prefix: 'rx_desc' }).has_payload), { doc: 'a descriptor with a payload: its QP\'s command comes later' });
  const cmdPop = m.wire('rx_cmd_pop', 1);
  const cmds = fifo(m, 'rx_cmd_qp', qb, RX_CMDS, { push: cmdPush, data: descQp, pop: cmdPop });
  m.assign(cmdsFull, cmds.full);
  const cmdQp = cmds.head;
  const cmdHere = m.let('rx_cmd_here', cmds.empty.not(), { doc: 'a payload waits for its command' });
  m.assign(pl.s_cmd_valid!, cmdHere.and(pickByIndex(cmdQp, wires.m_cmd_valid!)));
  m.assign(pl.s_cmd_addr!, pickByIndex(cmdQp, wires.m_cmd_addr!));
  m.assign(pl.s_cmd_discard!, pickByIndex(cmdQp, wires.m_cmd_discard!));
  for (let i = 0; i < N; i++) m.assign(w('m_cmd_ready', i), cmdHere.and(pl.s_cmd_ready!).and(cmdQp.eq(qpLit(i))));
  const cmdFire = m.let('rx_cmd_fire', pl.s_cmd_valid!.and(pl.s_cmd_ready!));
  m.assign(cmdPop, cmdFire);
  const placing = m.let('rx_place_push', cmdFire.and(pl.s_cmd_discard!.not()), { doc: 'a command that writes' });
  const writers = fifo(m, 'rx_place_qp', qb, 4, { push: placing, data: cmdQp, pop: pl.done! });
  const placeBits = indexBits(RX_CMDS + 1);
  for (let i = 0; i < N; i++) {
    const c = m.reg(`qp${i}_placing`, placeBits, { reset: 0, doc: `QP ${i}: its placement commands not yet written` });
    const none = m.reg(`qp${i}_placed`, 1, { reset: 1, doc: `QP ${i}: qp${i}_placing == 0, every placement written` });
    const next = m.let(`qp${i}_placing_now`, c.add(placing.and(cmdQp.eq(qpLit(i))).zext(placeBits)).sub(pl.done!.and(writers.head.eq(qpLit(i))).zext(placeBits)));
    m.sync(() => {
      m.set(c, next);
      m.set(none, next.eq(0));
    });
    m.assign(w('place_idle', i), none);
  }
  m.allowUnused(ra.idle!, 'each QP counts its own ULPDUs held (qp<i>_rx_held)');
  m.allowUnused(pl.idle!, 'each QP counts its own placements (qp<i>_placing)');
  m.allowUnused(d.fpdu_count!, 'a count over all QPs: the QPs count their own messages');

  // ---- network out: responses and work-request ULPDUs, whole and round-robin, into the shared mpa_tx --
  // Inputs 0..N-1: each QP's responder (Read/Atomic Responses, Terminate); input N: the requester
  // (work-request ULPDUs, tid its QP). A work-request ULPDU of a QP that has sent or received a
  // Terminate (tx_stopped) is drained here, never framed: nothing follows a Terminate (RFC 5040
  // §7.1); one already going into mpa_tx is finished, so the FPDU stays whole.
  const tQp = m.let('requester_qp', t.m_axis_tid!.slice(qb - 1, 0), { doc: 'the QP of the requester\'s ULPDU' });
  const wrMid = m.reg('tx_wr_mid', 1, { reset: 0, doc: 'a work-request ULPDU is part-way into mpa_tx' });
  const wrLive = m.let('tx_wr_live', pickByIndex(tQp, wires.tx_stopped!).not().or(wrMid), { doc: 'the requester\'s ULPDU may go to mpa_tx' });
  const drop = m.let('tx_drop', t.m_axis_tvalid!.and(wrLive.not()), { doc: 'a work-request beat after its QP\'s Terminate: discarded' });
  const txArb = roundRobin(m, 'tx_arb', [...liveAll('m_axis_tvalid'), t.m_axis_tvalid!.and(wrLive)]);
  const fromRequester = txArb.sel(N);
  const txQp = m.let('tx_qp', mux(fromRequester, tQp, txArb.index.width === qb ? txArb.index : txArb.index.slice(qb - 1, 0)), { doc: 'the QP of the ULPDU going into mpa_tx' });
  const f = m.wiresLike(mpa, 'framer');
  for (const n of ['tdata', 'tkeep', 'tlast']) m.assign(f[`s_axis_${n}`]!, txArb.pick([...wires[`m_axis_${n}`]!, t[`m_axis_${n}`]!]));
  // Each QP's framing context with its ULPDU; `cont` once an FPDU of the QP has gone (RFC 5044 §4.5).
  const framed = Array.from({ length: N }, (_, i) => m.reg(`qp${i}_framed`, 1, { reset: 0, doc: `QP ${i}: an FPDU has gone into mpa_tx, the next ones continue its sequence` }));
  const ctxOf = (k: keyof (typeof txCtx)[number]) => pickByIndex(txQp, txCtx.map((c) => c[k]));
  m.assign(f.s_axis_tuser!, MPA_TX_CTX.pack({
    ulpdu_length: txArb.pick([...wires.m_axis_tuser!, t.m_axis_tuser!]), seq: ctxOf('tx_seq'), s0: ctxOf('tx_s0'), markers: ctxOf('tx_markers'), crc: ctxOf('crc'), cont: pickByIndex(txQp, framed),
  }));
  m.assign(f.s_axis_tvalid!, txArb.valid);
  if (N > 1) m.assign(f.s_axis_tid!, txQp);
  for (let i = 0; i < N; i++) m.assign(w('m_axis_tready', i), txArb.sel(i).and(f.s_axis_tready!));
  m.assign(t.m_axis_tready!, fromRequester.and(f.s_axis_tready!).or(drop));
  const txFire = m.let('tx_fire', txArb.valid.and(f.s_axis_tready!));
  m.sync(() => {
    m.when(txFire.and(fromRequester), () => m.set(wrMid, f.s_axis_tlast!.not()));
    for (let i = 0; i < N; i++) {
      m.when(txFire.and(txQp.eq(qpLit(i))), () => m.set(framed[i]!, 1));
      m.when(qpRst[i]!, () => m.set(framed[i]!, 0));
    }
  });
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
  const sentPending: Signal[] = [];
  const firstPending: Signal[] = [];
  const sentBy = (i: number): Expr => t.m_sent_valid!.and(t.m_sent_qp!.eq(lit(t.m_sent_qp!.width, i)));
  // A QP's work requests taken and not yet sent (for qp_idle: the requester is shared; and its
  // room, wr_room). A restart empties the QP's ring in the requester: loaded while idle or fenced,
  // none of them had started, and none waits outside the ring.
  const wrTaken = m.let('wr_taken', wrValid.and(wrReady));
  const outBits = indexBits(DDP_TX_RING + 1);
  const wrOut = Array.from({ length: N }, (_, i) => {
    const c = m.reg(`qp${i}_wr_out`, outBits, { reset: 0, doc: `QP ${i}: work requests taken and not yet sent (at most ${DDP_TX_RING})` });
    const next = m.let(`qp${i}_wr_out_now`, c.add(wrTaken.and(wrQp.eq(qpLit(i))).zext(outBits)).sub(sentBy(i).zext(outBits)));
    m.sync(() => {
      m.set(c, next);
      m.set(wrRoom[i]!, next.lt(lit(outBits, DDP_TX_RING)));
      m.when(qpRst[i]!, () => {
        m.set(c, 0);
        m.set(wrRoom[i]!, 1);
      });
    });
    return c;
  });
  const qpCqValid: Expr[] = [];
  for (let i = 0; i < N; i++) {
    // The transmit side's `sent` and `first` pulses have no ready: kept here until the queue takes them.
    const pending = m.reg(`qp${i}_sent_pending`, 16, { reset: 0, doc: `QP ${i}: sent completions not yet in m_cq` });
    const first = m.reg(`qp${i}_first_pending`, 1, { reset: 0, doc: `QP ${i}: its first-FPDU completion is not yet in m_cq` });
    sentPending.push(pending);
    firstPending.push(first);
    qpCqValid.push(m.let(`qp${i}_cq_valid`, live('m_evt_valid', i).or(first).or(pending.ne(0))));
  }
  const cqArb = roundRobin(m, 'cq_arb', qpCqValid);
  const evtPicked = m.let('cq_from_evt', cqArb.pick(liveAll('m_evt_valid')), { doc: 'the granted QP offers an event (events first)' });
  const firstPicked = m.let('cq_from_first', evtPicked.not().and(cqArb.pick(firstPending)), { doc: 'the granted QP offers its first-FPDU completion (before sent ones)' });
  m.assign(cqValid, cqArb.valid);
  m.assign(cqQp, cqArb.index);
  // The granted QP's event, and the entry: that event with its kind widened, or a bare kind 8 or 7.
  const evtOf = (i: number) => {
    const e = (f: string) => w(`m_evt_${f}`, i);
    return RX_EVENT_FIELDS.pack({ kind: e('kind'), length: e('length'), solicited: e('solicited'), invalidated: e('invalidated'), stag: e('stag'), data: e('data'), err: e('err') });
  };
  const evt = RX_EVENT_FIELDS.view(cqArb.pick(Array.from({ length: N }, (_, i) => evtOf(i))), { m, prefix: 'cq_evt' });
  const kb = CQ_ENTRY.field('kind').width;
  const txKind = mux(firstPicked, lit(kb, CQ_KIND.FIRST_FPDU), lit(kb, CQ_KIND.SENT));
  const entry = mux(evtPicked, CQ_ENTRY.pack({ kind: evt.kind.zext(kb), length: evt.length, solicited: evt.solicited, invalidated: evt.invalidated, stag: evt.stag, data: evt.data, err: evt.err }), CQ_ENTRY.update(CQ_ENTRY.zero(), { kind: txKind }));
  portGroup(m, 'm_cq', CQ_ENTRY, 'output', qg).drive(entry);
  const cqFire = m.let('cq_fire', cqArb.valid.and(cqReady));
  for (let i = 0; i < N; i++) {
    m.assign(w('m_evt_ready', i), cqArb.sel(i).and(cqReady));
    const granted = cqFire.and(cqArb.sel(i));
    const takeSent = granted.and(evtPicked.not()).and(firstPicked.not());
    const p = sentPending[i]!;
    const f = firstPending[i]!;
    m.sync(() => {
      m.set(p, p.add(sentBy(i).zext(16)).sub(takeSent.zext(16)));
      // Set once per connection, taken once: never both in one cycle (nothing is pending to take).
      m.when(granted.and(firstPicked), () => m.set(f, 0));
      m.when(live('m_first_valid', i), () => m.set(f, 1));
    });
  }

  // ---- host memory --------------------------------------------------------------------------------
  const wg = 'Host memory write (W-aligned beats with strobes)';
  // Writers 0..N-1: each QP's atomic write-back; N: ddp_rx_place (every QP's placement).
  const wrArb = roundRobin(m, 'mem_wr_arb', [...liveAll('mem_wr_valid'), pl.wr_valid!]);
  for (const n of ['addr', 'data', 'strb']) m.assign(m.portLike(qp, `mem_wr_${n}`, `mem_wr_${n}`, wg), wrArb.pick([...wires[`mem_wr_${n}`]!, pl[`wr_${n}`]!]));
  m.assign(m.portLike(qp, 'mem_wr_valid', 'mem_wr_valid', wg), wrArb.valid);
  const memWrReady = m.portLike(qp, 'mem_wr_ready', 'mem_wr_ready', wg);
  for (let i = 0; i < N; i++) m.assign(w('mem_wr_ready', i), wrArb.sel(i).and(memWrReady));
  m.assign(pl.wr_ready!, wrArb.sel(N).and(memWrReady));
  const memWrFire = m.let('mem_wr_fire', wrArb.valid.and(memWrReady));

  const rg = 'Host memory read (W-aligned beats; data in order, always accepted)';
  const ownersFull = m.wire('mem_rd_owners_full', 1);
  // Readers 0..N-1: each QP's responder; N: the requester.
  const rdArb = roundRobin(m, 'mem_rd_arb', [...liveAll('mem_rd_valid'), t.rd_valid!].map((v) => v.and(ownersFull.not())));
  m.assign(m.portLike(qp, 'mem_rd_addr', 'mem_rd_addr', rg), rdArb.pick([...wires.mem_rd_addr!, t.rd_addr!]));
  m.assign(m.portLike(qp, 'mem_rd_valid', 'mem_rd_valid', rg), rdArb.valid);
  const memRdReady = m.portLike(qp, 'mem_rd_ready', 'mem_rd_ready', rg);
  const rdDataValid = m.portLike(qp, 'mem_rd_data_valid', 'mem_rd_data_valid', rg);
  const rdData = m.portLike(qp, 'mem_rd_data', 'mem_rd_data', rg);
  const rdFire = m.let('mem_rd_fire', rdArb.valid.and(memRdReady));
  // The port returns a beat per cycle at most: as many reads in flight as one reader may have
  // cover the same latency for all of them (READ_OWNERS_DEPTH).
  const owners = fifo(m, 'mem_rd_owners', rdArb.index.width, READ_OWNERS_DEPTH, { push: rdFire, data: rdArb.index, pop: rdDataValid });
  m.assign(ownersFull, owners.full);
  const ownerIs = (i: number) => rdDataValid.and(owners.head.eq(lit(rdArb.index.width, i)));
  for (let i = 0; i < N; i++) {
    m.assign(w('mem_rd_ready', i), rdArb.sel(i).and(memRdReady).and(ownersFull.not()));
    m.assign(w('mem_rd_data_valid', i), ownerIs(i));
    m.assign(w('mem_rd_data', i), rdData);
  }
  m.assign(t.rd_ready!, rdArb.sel(N).and(memRdReady).and(ownersFull.not()));
  m.assign(t.rd_data_valid!, ownerIs(N));
  m.assign(t.rd_data!, rdData);

  m.sync(() => {
    txArb.sync(txFire, f.s_axis_tlast!);
    cqArb.sync(cqFire, lit(1, 1));
    wrArb.sync(memWrFire, lit(1, 1));
    rdArb.sync(rdFire, lit(1, 1));
  });

  // ---- status, one bit per QP ---------------------------------------------------------------------
  const sg = 'Status (bit i: QP i)';
  // mpa_rx's reader holds one QP's stream (ctx_qp) and its pipeline may still finish the one
  // before (drain_qp); the others have nothing in it.
  const inMpaRx = (i: number): Expr => d.idle!.not().and(d.ctx_qp!.eq(qpLit(i))).or(d.drain_busy!.and(d.drain_qp!.eq(qpLit(i))));
  // A QP's whole ULPDUs from their last beat into ulpdu_reasm until their descriptor reaches its
  // ddp_rx_ctl (ulpdu_reasm and ddp_rx_hdr are shared: they hold them for it).
  const heldBits = indexBits(reasmPages + RX_TAGS + 2);
  const held = Array.from({ length: N }, (_, i) => {
    const c = m.reg(`qp${i}_rx_held`, heldBits, { reset: 0, doc: `QP ${i}: whole ULPDUs in ulpdu_reasm and ddp_rx_hdr` });
    m.sync(() => {
      m.set(c, c.add(ulpduIn.and(dTid.eq(qpLit(i))).zext(heldBits)).sub(descFire.and(descQp.eq(qpLit(i))).zext(heldBits)));
    });
    return c;
  });
  const rxIdle = (i: number): Expr => w('rx_idle', i).and(inMpaRx(i).not()).and(held[i]!.eq(0));
  const mpaErr: Signal[] = [];
  for (let i = 0; i < N; i++) {
    const e = m.reg(`qp${i}_mpa_err`, 1, { reset: 0, doc: `QP ${i}: MPA failed one of its FPDUs (until its restart)` });
    mpaErr.push(e);
    m.sync(() => {
      m.when(ulpduOut.and(rTid.eq(qpLit(i))).and(verdict.passed.not()), () => m.set(e, 1));
      m.when(qpRst[i]!, () => m.set(e, 0));
    });
  }
  const vec = (name: string, doc: string, bits: (i: number) => Expr) => {
    const o = m.output(name, N, { group: sg, doc });
    m.assign(o, N === 1 ? bits(0) : cat(...Array.from({ length: N }, (_, i) => bits(N - 1 - i))));
  };
  vec('qp_rx_stopped', 'the QP takes no more ULPDUs (a Terminate or an LLP error)', (i) => w('rx_stopped', i));
  vec('qp_tx_stopped', 'the QP sends nothing more (its Terminate has been queued)', (i) => w('tx_stopped', i));
  vec('qp_idle', 'nothing in progress in the QP (placement written, responses and work requests sent)', (i) => w('idle', i).and(rxIdle(i)).and(sentPending[i]!.eq(0)).and(wrOut[i]!.eq(0)));
  vec('qp_rx_idle', 'the receive side of the QP is idle: every ULPDU handled, every placement written', rxIdle);
  vec('qp_mpa_err', 'MPA failed an FPDU of the QP', (i) => mpaErr[i]!);
  vec('qp_fenced', "the QP's transmit waits for the peer's first FPDU (MPA fencing, cfg_fence)", (i) => w('fenced', i));
  m.assign(m.output('tx_err_length', 1, { group: sg, doc: 'sticky: mpa_tx saw a ULPDU of the wrong length (a broken block)' }), f.err_length!);
  const irrqBits = port('irrq_used').width;
  const irrq = m.output('qp_irrq_used', irrqBits * N, { group: sg, doc: `bits ${irrqBits}i+${irrqBits - 1}..${irrqBits}i: inbound Read/Atomic Requests QP i has not yet answered` });
  m.assign(irrq, N === 1 ? w('irrq_used', 0) : cat(...Array.from({ length: N }, (_, i) => w('irrq_used', N - 1 - i))));

  for (let i = 0; i < N; i++) m.instance(qp, `u_qp${i}`, { clk, rst: qpRst[i]!, ...conns[i]! });
  m.instance(stags, 'u_stags', { clk, rst, ...st });
  m.instance(requester, 'u_requester', { clk, rst, ...t });
  m.instance(deframer, 'u_mpa_rx', { clk, rst, ...d });
  m.instance(reasm, 'u_reasm', { clk, rst, ...ra });
  m.instance(hdr, 'u_ddp_rx_hdr', { clk, rst, ...hd });
  m.instance(place, 'u_ddp_rx_place', { clk, rst, ...pl });
  m.instance(mpa, 'u_mpa_tx', { clk, rst, ...f });
  return m.build();
}
