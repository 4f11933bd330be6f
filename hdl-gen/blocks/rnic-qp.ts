import { lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { roundRobin } from '../lib/arbiter';
import { type DdpRxOptions, ddpRxModule } from './ddp-rx';
import { WR_KIND, ddpTxModule } from './ddp-tx';
import { fifo } from '../lib/fifo';
import { sourceStream } from '../core/stream';
import { MPA_TX_CTX } from './records';
import { checkRnicWidth } from './rnic-widths';

/**
 * One QP of the RNIC, both directions, between the MPA blocks all QPs share (rnic_top):
 *
 *   s_axis (ULPDUs from mpa_rx) → ddp_rx_w<W>_shared_stags → host memory, m_evt, responses
 *                                  ↕ stag_lk_*, stag_inv_*: the STag table all QPs share (rnic_top)
 *   wr_* (work requests)    → ddp_tx_w<W> → ┐
 *   responses, Terminate    ────────────────┴→ packet mux → m_axis (ULPDUs and their framing context)
 *
 * m_axis goes to the mpa_tx that all QPs share (rnic_top), one ULPDU per packet, tuser the framing
 * context on every beat (the record mpa_tx_ctx):
 * - Transmit framing context (RFC 5044 §4.5, §7): the QP's first FPDU starts at cfg_tx_seq, every
 *   later one where the previous ended (mpa_tx's continue bit), with markers counted from this
 *   side's S0 (cfg_tx_s0). Markers are negotiated per direction (the peer's M bit asks for
 *   markers in what this QP sends: cfg_tx_markers), the CRC once for both (RFC 5044 §7.1,
 *   spec/mpa.md §3.4, §4.2). The receive side's MPA context is mpa_rx's (rnic_top).
 * - The packet mux takes whole ULPDUs, responses first (they answer requests the peer is waiting
 *   on, RFC 5040 §5.5). Once the QP has sent or received a Terminate (tx_stopped), work-request
 *   ULPDUs not yet started are dropped: nothing follows a Terminate (RFC 5040 §7.1).
 * - A Read or Atomic work request enters the ORQ (the Data Sink STag/TO and size, or the Request
 *   Identifier) in the cycle ddp_tx takes it, so its response is checked against it (T6/T7).
 *   While cfg_ord of them are outstanding (or the ORQ is full) the next one waits at wr_ready,
 *   and the work requests behind it with it: ORD is never exceeded (RFC 5040 §6.1).
 * - One host-memory read port for the responder and the requester: a round-robin arbiter per beat
 *   and a FIFO of owners (in-order data goes back to whoever asked).
 * - m_sent_valid: a work request's last ULPDU has left ddp_tx (a pulse, for the completion queue).
 * - MPA fencing (RFC 6581 §3): with cfg_fence (the responder) nothing goes to mpa_tx, work requests
 *   and Terminates alike, until the peer's first FPDU has arrived, good or failed, and ddp_rx has
 *   decided it (if it raised a Terminate, the work requests that waited are dropped behind it);
 *   m_first_valid says so once, for the host. Cost: one cycle after that decision.
 */
/**
 * Reads in flight on a memory port, bounded by its FIFO of owners (full holds the arbiter). The
 * port returns at most a beat per cycle, so this many cover a read latency of as many cycles at
 * full rate, whoever asked: 512 is twice a PCIe host's latency at 250 MHz, and as deep as the
 * read FIFOs of ddp_tx and rdmap_tx_resp together.
 */
export const QP_READ_OWNERS_DEPTH = 512;

export function rnicQpModule(bytes: number, opts: DdpRxOptions = {}): Module {
  checkRnicWidth('rnic_qp', bytes);
  const W = bytes;
  const rx = ddpRxModule(W, { ...opts, sharedStags: true });
  const tx = ddpTxModule(W);
  const m = new ModuleBuilder(
    `rnic_qp_w${W}`,
    `One RNIC QP, ${W} octets per beat: ddp_rx on the receive side (ULPDUs from the shared mpa_rx); ddp_tx work requests and\n` +
      'the responder\'s Read/Atomic Responses and Terminates muxed into ULPDUs for the shared mpa_tx on the transmit side.',
    { bytes: W },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const r = m.wiresLike(rx, 'rx_path');
  const t = m.wiresLike(tx, 'tx_path');
  const og = 'AXI4-Stream output: ULPDUs for the shared mpa_tx, tuser the framing context (m_axis)';
  const u = sourceStream({ bytes: W, user: MPA_TX_CTX.width }).declare(m, 'm_axis', og, MPA_TX_CTX);

  // ---- configuration ------------------------------------------------------------------------------
  const cg = 'Configuration (static while the QP runs; the first MSN and sequence numbers load in reset)';
  const cfg = {
    rfc7306: m.portLike(rx, 'cfg_rfc7306', 'cfg_rfc7306', cg),
    pd: m.portLike(rx, 'cfg_pd', 'cfg_pd', cg),
    ird: m.portLike(rx, 'cfg_ird', 'cfg_ird', cg),
    ord: m.portLike(rx, 'cfg_ord', 'cfg_ord', cg),
    msn: m.portLike(rx, 'cfg_initial_msn', 'cfg_initial_msn', cg),
    mulpdu: m.input('cfg_mulpdu', 16, { group: cg, doc: 'largest ULPDU this QP sends (MULPDU, RFC 5044 §5); both directions of MPA use it' }),
    bigEndian: m.portLike(rx, 'cfg_big_endian', 'cfg_big_endian', cg),
    txMarkers: m.input('cfg_tx_markers', 1, { group: cg, doc: 'MPA markers in what this QP sends (the peer\'s M bit)' }),
    crc: m.input('cfg_crc', 1, { group: cg, doc: 'MPA CRC, both directions (negotiated, RFC 5044 §7.1)' }),
    txS0: m.input('cfg_tx_s0', 9, { group: cg, doc: 'low 9 bits of this side\'s S0: where the sent markers count from' }),
    txSeq: m.input('cfg_tx_seq', 9, { group: cg, doc: 'low 9 bits of the sequence number of the first sent octet' }),
    fence: m.input('cfg_fence', 1, { group: cg, doc: 'MPA fencing: send nothing before the peer\'s first FPDU has arrived (the responder, RFC 6581 section 3)' }),
  };
  const connect: Record<string, Signal> = {
    cfg_rfc7306: cfg.rfc7306, cfg_pd: cfg.pd, cfg_ird: cfg.ird, cfg_ord: cfg.ord, cfg_initial_msn: cfg.msn, cfg_mulpdu: cfg.mulpdu, cfg_big_endian: cfg.bigEndian,
  };
  for (const [k, v] of Object.entries(connect)) m.assign(r[k]!, v);
  m.assign(t.cfg_mulpdu!, cfg.mulpdu);
  m.assign(t.cfg_initial_msn!, cfg.msn);

  // ---- receive: straight through ------------------------------------------------------------------
  const passRx = (names: readonly string[], group?: string) => {
    for (const n of names) {
      const p = m.portLike(rx, n, n, group);
      if (rx.ports.find((x) => x.name === n)!.role === 'input') m.assign(r[n]!, p);
      else m.assign(p, r[n]!);
    }
  };
  passRx(rx.ports.filter((p) => p.name.startsWith('s_axis_') || p.name === 's_llp_err' || p.name.startsWith('stag_') || p.name.startsWith('s_recv_') || p.name.startsWith('m_evt_')).map((p) => p.name));
  passRx(['inject_valid', 'inject_err', 'abort_req']);
  passRx(['mem_wr_valid', 'mem_wr_ready', 'mem_wr_addr', 'mem_wr_data', 'mem_wr_strb']);
  passRx(['rx_stopped', 'tx_stopped', 'irrq_used', 'rx_idle'], 'Status');

  // ---- work requests: ddp_tx, and the ORQ entry of a Read or Atomic --------------------------------
  const wrNames = tx.ports.filter((p) => p.name.startsWith('wr_') && p.name !== 'wr_ready' && p.name !== 'wr_valid').map((p) => p.name);
  const wrGroup = 'Work requests (one per message, in send order; ddp_tx_w<W>)';
  const wrValid = m.portLike(tx, 'wr_valid', 'wr_valid', wrGroup);
  const wrReady = m.portLike(tx, 'wr_ready', 'wr_ready', wrGroup);
  const wr: Record<string, Signal> = {};
  for (const n of wrNames) {
    wr[n] = m.portLike(tx, n, n, wrGroup);
    m.assign(t[n]!, wr[n]!);
  }
  const kind = wr.wr_kind!;
  const needsOrq = m.let('wr_needs_orq', kind.eq(lit(3, WR_KIND.READ)).or(kind.eq(lit(3, WR_KIND.ATOMIC))), { doc: 'a Read or Atomic Request: its response is expected' });
  const orqOk = m.let('wr_orq_ok', needsOrq.not().or(r.s_orq_ready!));
  m.assign(t.wr_valid!, wrValid.and(orqOk));
  m.assign(wrReady, t.wr_ready!.and(orqOk));
  m.assign(r.s_orq_valid!, wrValid.and(needsOrq).and(t.wr_ready!));
  const atomic = kind.eq(lit(3, WR_KIND.ATOMIC));
  m.assign(r.s_orq_atomic!, atomic);
  m.assign(r.s_orq_stag!, mux(atomic, lit(32, 0), wr.wr_sink_stag!));
  m.assign(r.s_orq_to!, mux(atomic, lit(64, 0), wr.wr_sink_to!));
  m.assign(r.s_orq_size!, mux(atomic, lit(32, 0), wr.wr_len!));
  m.assign(r.s_orq_request_id!, mux(atomic, wr.wr_request_id!, lit(32, 0)));
  const sent = m.output('m_sent_valid', 1, { group: 'Status', doc: "a work request's last ULPDU has left ddp_tx (one cycle per work request)" });
  m.assign(sent, t.m_sent_valid!);

  // ---- one memory read port: responder (rx) and requester (tx) ------------------------------------
  const rg = 'Host memory read (W-aligned beats; data in order, always accepted)';
  const rd = {
    valid: m.output('mem_rd_valid', 1, { group: rg }),
    ready: m.input('mem_rd_ready', 1, { group: rg }),
    addr: m.output('mem_rd_addr', 64, { group: rg, doc: 'a multiple of W' }),
    dataValid: m.input('mem_rd_data_valid', 1, { group: rg }),
    data: m.input('mem_rd_data', 8 * W, { group: rg, doc: 'lane j = octet at mem_rd_addr + j' }),
  };
  const ownersFull = m.wire('rd_owners_full', 1);
  const rdArb = roundRobin(m, 'rd_arb', [r.mem_rd_valid!.and(ownersFull.not()), t.rd_valid!.and(ownersFull.not())]);
  m.assign(rd.valid, rdArb.valid);
  m.assign(rd.addr, rdArb.pick([r.mem_rd_addr!, t.rd_addr!]));
  const rdFire = m.let('rd_fire', rdArb.valid.and(rd.ready));
  m.assign(r.mem_rd_ready!, rdArb.sel(0).and(rd.ready).and(ownersFull.not()));
  m.assign(t.rd_ready!, rdArb.sel(1).and(rd.ready).and(ownersFull.not()));
  const owners = fifo(m, 'rd_owners', 1, QP_READ_OWNERS_DEPTH, { push: rdFire, data: rdArb.index, pop: rd.dataValid });
  m.assign(ownersFull, owners.full);
  m.assign(r.mem_rd_data_valid!, rd.dataValid.and(owners.head.not()));
  m.assign(t.rd_data_valid!, rd.dataValid.and(owners.head));
  m.assign(r.mem_rd_data!, rd.data);
  m.assign(t.rd_data!, rd.data);

  // ---- MPA fencing (RFC 6581 §3, spec/mpa.md §7.4) ---------------------------------------------------
  // The peer's first FPDU has arrived, good or failed (a failed one has still arrived, as the
  // model counts it), once the receive side has decided it: a Terminate it raises is queued by
  // then, so the work requests that waited are dropped behind it, as the model drops them.
  const arrived = m.reg('rx_arrived', 1, { reset: 0, doc: "the peer's first FPDU has arrived and been decided" });
  const arrives = r.ulpdu_decided!;
  const hold = m.let('tx_fence_hold', cfg.fence.and(arrived.not()), { doc: 'the responder holds every FPDU until the initiator\'s first has arrived' });
  const fenced = m.output('fenced', 1, { group: 'Status', doc: "the QP's transmit waits for the peer's first FPDU (MPA fencing, cfg_fence)" });
  m.assign(fenced, hold);
  const first = m.output('m_first_valid', 1, { group: 'Status', doc: "the first FPDU of a fenced QP has arrived: it may send now (one cycle, for the completion queue)" });
  m.assign(first, hold.and(arrives));

  // ---- transmit: responses and work-request ULPDUs out, for mpa_tx ----------------------------------
  // A work-request ULPDU after a Terminate is drained here, never framed.
  // One already going into mpa_tx is finished, so the FPDU stays whole.
  const stopped = r.tx_stopped!;
  const wrMid = m.reg('tx_wr_mid', 1, { reset: 0, doc: 'a work-request ULPDU is part-way into mpa_tx' });
  const wrLive = m.let('tx_wr_live', stopped.not().or(wrMid), { doc: 'work-request ULPDUs may go to mpa_tx' });
  const txArb = roundRobin(m, 'tx_arb', [r.m_axis_tvalid!.and(hold.not()), t.m_axis_tvalid!.and(wrLive).and(hold.not())]);
  const drop = m.let('tx_drop', t.m_axis_tvalid!.and(wrLive.not()), { doc: 'a work-request beat after the Terminate: discarded' });
  m.assign(u.valid, txArb.valid);
  m.assign(u.data, txArb.pick([r.m_axis_tdata!, t.m_axis_tdata!]));
  m.assign(u.keep!, txArb.pick([r.m_axis_tkeep!, t.m_axis_tkeep!]));
  m.assign(u.last!, txArb.pick([r.m_axis_tlast!, t.m_axis_tlast!]));
  const framed = m.reg('tx_framed', 1, { reset: 0, doc: 'an FPDU has gone into mpa_tx: the next ones continue the sequence' });
  const left = txArb.pick([r.m_axis_tuser!, t.m_axis_tuser!]);
  m.assign(u.user!, MPA_TX_CTX.pack({ ulpdu_length: left, seq: cfg.txSeq, s0: cfg.txS0, markers: cfg.txMarkers, crc: cfg.crc, cont: framed }));
  // The grant points somewhere even with no valid: the held side's ready stays low with its valid.
  const txReady = m.let('tx_ready', u.ready.and(hold.not()), { doc: 'mpa_tx takes a beat and the fence is open' });
  m.assign(r.m_axis_tready!, txArb.sel(0).and(txReady));
  m.assign(t.m_axis_tready!, txArb.sel(1).and(txReady).or(drop));
  const txFire = m.let('tx_fire', txArb.valid.and(u.ready));
  m.sync(() => {
    txArb.sync(txFire, u.last!);
    rdArb.sync(rdFire, lit(1, 1));
    m.when(txFire, () => m.set(framed, 1));
    m.when(arrives, () => m.set(arrived, 1));
    m.when(txFire.and(txArb.sel(1)), () => m.set(wrMid, u.last!.not()));
  });

  const idle = m.output('idle', 1, { group: 'Status', doc: 'nothing in progress on either side (the shared mpa_rx and mpa_tx may still hold a few beats)' });
  m.assign(idle, r.idle!.and(t.idle!).and(owners.empty).and(txArb.valid.not()));

  m.instance(rx, 'u_rx', { clk, rst, ...r });
  m.instance(tx, 'u_tx', { clk, rst, ...t });
  return m.build();
}
