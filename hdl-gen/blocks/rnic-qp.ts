import { ModuleBuilder, type Module } from '../core/module';
import { sourceStream } from '../core/stream';
import { type DdpRxOptions, ddpRxModule } from './ddp-rx';
import { checkRnicWidth } from './rnic-widths';

/**
 * One QP of the RNIC, between the blocks all QPs share (rnic_top): its receive path and its
 * responder.
 *
 *   s_axis (ULPDUs from mpa_rx) → ddp_rx_w<W>_shared_stags → host memory, m_evt, responses
 *                                  ↕ stag_lk_*, stag_inv_*: the STag table all QPs share (rnic_top)
 *   responses, Terminate        → m_axis (ULPDUs, tuser their length), for the shared mpa_tx
 *
 * Work requests go to the requester all QPs share (ddp_tx_w<W>_q<N> in rnic_top); a Read or
 * Atomic work request enters this QP's ORQ (s_orq_*, the Data Sink STag/TO and size, or the
 * Request Identifier) in the cycle that requester takes it, so its response is checked against it
 * (T6/T7); rnic_top holds the work request while s_orq_ready is low (RFC 5040 §6.1).
 * - m_axis: the responder's ULPDUs (Read and Atomic Responses, RFC 5040 §5.5) and the Terminate,
 *   one per packet, tuser the ULPDU's length; rnic_top adds the QP's framing context.
 * - MPA fencing (RFC 6581 §3): with cfg_fence (the responder) nothing goes to mpa_tx until the
 *   peer's first FPDU has arrived, good or failed, and ddp_rx has decided it (if it raised a
 *   Terminate, it goes first); `fenced` says the QP waits (rnic_top holds its work requests in
 *   the shared requester's scheduler), m_first_valid says once that it may send now. Cost: one
 *   cycle after that decision.
 */
export function rnicQpModule(bytes: number, opts: DdpRxOptions = {}): Module {
  checkRnicWidth('rnic_qp', bytes);
  const W = bytes;
  const rx = ddpRxModule(W, { ...opts, sharedStags: true });
  const m = new ModuleBuilder(
    `rnic_qp_w${W}`,
    `One RNIC QP, ${W} octets per beat: ddp_rx on the receive side (ULPDUs from the shared mpa_rx), and its responder's\n` +
      'Read/Atomic Responses and Terminate out as ULPDUs for the shared mpa_tx, held by MPA fencing.',
    { bytes: W },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const r = m.wiresLike(rx, 'rx_path');
  const og = 'AXI4-Stream output: the responder\'s ULPDUs for the shared mpa_tx, tuser the ULPDU length (m_axis)';
  const u = sourceStream({ bytes: W, user: 16 }).declare(m, 'm_axis', og);

  // ---- configuration ------------------------------------------------------------------------------
  const cg = 'Configuration (static while the QP runs; the first MSN loads in reset)';
  for (const n of ['cfg_rfc7306', 'cfg_pd', 'cfg_ird', 'cfg_ord', 'cfg_initial_msn', 'cfg_mulpdu', 'cfg_big_endian']) m.assign(r[n]!, m.portLike(rx, n, n, cg));
  const fence = m.input('cfg_fence', 1, { group: cg, doc: 'MPA fencing: send nothing before the peer\'s first FPDU has arrived (the responder, RFC 6581 section 3)' });

  // ---- receive: straight through ------------------------------------------------------------------
  const passRx = (names: readonly string[], group?: string) => {
    for (const n of names) {
      const p = m.portLike(rx, n, n, group);
      if (rx.ports.find((x) => x.name === n)!.role === 'input') m.assign(r[n]!, p);
      else m.assign(p, r[n]!);
    }
  };
  const prefixed = (...prefixes: string[]) => rx.ports.filter((p) => prefixes.some((x) => p.name.startsWith(x))).map((p) => p.name);
  passRx([...prefixed('s_axis_', 'stag_', 's_recv_', 'm_evt_', 's_orq_'), 's_llp_err']);
  passRx(['inject_valid', 'inject_err', 'abort_req']);
  passRx(['mem_wr_valid', 'mem_wr_ready', 'mem_wr_addr', 'mem_wr_data', 'mem_wr_strb']);
  passRx(['mem_rd_valid', 'mem_rd_ready', 'mem_rd_addr', 'mem_rd_data_valid', 'mem_rd_data']);
  passRx(['rx_stopped', 'tx_stopped', 'irrq_used', 'rx_idle'], 'Status');

  // ---- MPA fencing (RFC 6581 §3, spec/mpa.md §7.4) ---------------------------------------------------
  // The peer's first FPDU has arrived, good or failed (a failed one has still arrived, as the
  // model counts it), once the receive side has decided it: a Terminate it raises is queued by
  // then, so it goes out ahead of the work requests that waited, as the model sends it.
  const arrived = m.reg('rx_arrived', 1, { reset: 0, doc: "the peer's first FPDU has arrived and been decided" });
  const arrives = r.ulpdu_decided!;
  const hold = m.let('tx_fence_hold', fence.and(arrived.not()), { doc: 'the responder holds every FPDU until the initiator\'s first has arrived' });
  m.assign(m.output('fenced', 1, { group: 'Status', doc: "the QP's transmit waits for the peer's first FPDU (MPA fencing, cfg_fence)" }), hold);
  const first = m.output('m_first_valid', 1, { group: 'Status', doc: 'the first FPDU of a fenced QP has arrived: it may send now (one cycle, for the completion queue)' });
  m.assign(first, hold.and(arrives));

  // ---- transmit: the responder's ULPDUs, for mpa_tx ---------------------------------------------------
  m.assign(u.valid, r.m_axis_tvalid!.and(hold.not()));
  m.assign(u.data, r.m_axis_tdata!);
  m.assign(u.keep!, r.m_axis_tkeep!);
  m.assign(u.last!, r.m_axis_tlast!);
  m.assign(u.user!, r.m_axis_tuser!);
  m.assign(r.m_axis_tready!, u.ready.and(hold.not()));
  m.sync(() => m.when(arrives, () => m.set(arrived, 1)));

  const idle = m.output('idle', 1, { group: 'Status', doc: 'nothing in progress in the receive path and the responder (the shared blocks may still hold a few beats)' });
  m.assign(idle, r.idle!.and(r.m_axis_tvalid!.not()));

  m.instance(rx, 'u_rx', { clk, rst, ...r });
  return m.build();
}
