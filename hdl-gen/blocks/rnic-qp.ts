import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { sourceStream } from '../core/stream';
import { STAG_PORTS } from './ddp-rx';
import { ddpRxCtlModule, type DdpRxCtlOptions } from './ddp-rx-ctl';
import { rdmapTxRespModule } from './rdmap-tx-resp';
import { checkRnicWidth } from './rnic-widths';

/**
 * One QP of the RNIC, between the blocks all QPs share (rnic_top): its receive control and its
 * responder.
 *
 *   s_desc (its ULPDUs' descriptors, from the shared ddp_rx_hdr) → ddp_rx_ctl → m_cmd (placement,
 *     for the shared ddp_rx_place), m_evt, the IRRQ → rdmap_tx_resp → m_axis (ULPDUs, tuser their
 *     length, for the shared mpa_tx), mem_rd (Read Responses), mem_wr (the atomic write-back)
 *                                  ↕ stag_lk_*, stag_inv_*: the STag table all QPs share (rnic_top)
 *
 * The header decode and the placement data mover are the RNIC's (rnic_top): ddp_rx_ctl takes the
 * descriptors of this QP's ULPDUs in their order, and place_idle says every placement command of
 * this QP accepted so far has been written (rnic_top counts them), so a Read or Atomic Request is
 * answered after the writes before it (RFC 5040 §5.5 rule 6).
 *
 * Work requests go to the requester all QPs share (ddp_tx_w<W>_q<N> in rnic_top); a Read or
 * Atomic work request enters this QP's ORQ (s_orq_*, the Data Sink STag/TO and size, or the
 * Request Identifier) in the cycle that requester takes it, so its response is checked against it
 * (T6/T7); rnic_top holds the work request while s_orq_ready is low (RFC 5040 §6.1).
 * - m_axis: the responder's ULPDUs (Read and Atomic Responses, RFC 5040 §5.5) and the Terminate,
 *   one per packet, tuser the ULPDU's length; rnic_top adds the QP's framing context.
 * - MPA fencing (RFC 6581 §3): with cfg_fence (the responder) nothing goes to mpa_tx until the
 *   peer's first FPDU has arrived, good or failed, and ddp_rx_ctl has decided it (if it raised a
 *   Terminate, it goes first); `fenced` says the QP waits (rnic_top holds its work requests in
 *   the shared requester's scheduler), m_first_valid says once that it may send now. Cost: one
 *   cycle after that decision.
 */
export function rnicQpModule(bytes: number, opts: DdpRxCtlOptions = {}): Module {
  checkRnicWidth('rnic_qp', bytes);
  const W = bytes;
  const ctl = ddpRxCtlModule(opts);
  const resp = rdmapTxRespModule(W);
  const m = new ModuleBuilder(
    `rnic_qp_w${W}`,
    `One RNIC QP, ${W} octets per beat: the receive control (ddp_rx_ctl: checks, MSNs, queues, placement commands, events) of\n` +
      'its ULPDUs, and its responder\'s Read/Atomic Responses and Terminate out as ULPDUs for the shared mpa_tx, held by MPA fencing.',
    { bytes: W },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const c = m.wiresLike(ctl, 'ctl');
  const r = m.wiresLike(resp, 'resp');
  /** Ports of `child` (wires `w`) as ports of this module, renamed by `rename`. */
  const pass = (child: Module, w: Record<string, Signal>, names: readonly string[], rename: (n: string) => string, group?: string) => {
    for (const n of names) {
      const p = m.portLike(child, n, rename(n), group);
      if (child.ports.find((x) => x.name === n)!.role === 'input') m.assign(w[n]!, p);
      else m.assign(p, w[n]!);
    }
  };
  const same = (n: string) => n;
  const prefixed = (child: Module, ...prefixes: string[]) => child.ports.filter((p) => prefixes.some((x) => p.name.startsWith(x))).map((p) => p.name);

  // ---- configuration ------------------------------------------------------------------------------
  const cg = 'Configuration (static while the QP runs; the first MSN loads in reset)';
  pass(ctl, c, ['cfg_pd', 'cfg_ird', 'cfg_ord', 'cfg_initial_msn'], same, cg);
  pass(resp, r, ['cfg_mulpdu', 'cfg_big_endian'], same, cg);
  m.assign(r.cfg_initial_msn!, c.cfg_initial_msn!);
  const fence = m.input('cfg_fence', 1, { group: cg, doc: 'MPA fencing: send nothing before the peer\'s first FPDU has arrived (the responder, RFC 6581 section 3)' });

  // ---- receive control: straight through ----------------------------------------------------------
  pass(ctl, c, [...prefixed(ctl, 's_desc_'), ...prefixed(ctl, 'm_cmd_'), 'place_idle'], same, 'Its ULPDUs: descriptors from the shared ddp_rx_hdr, placement commands to the shared ddp_rx_place');
  pass(ctl, c, [...STAG_PORTS.request, ...STAG_PORTS.ready, ...STAG_PORTS.response], (n) => `stag_${n}`, "The RNIC's STag table (stag_lk_*, stag_inv_*)");
  pass(ctl, c, [...prefixed(ctl, 's_recv_', 's_orq_', 'm_evt_'), 'inject_valid', 'inject_err', 'abort_req'], same);
  pass(ctl, c, ['rx_stopped', 'tx_stopped', 'irrq_used'], same, 'Status');
  // ddp_rx_ctl's IRRQ and Terminate into the responder.
  for (const p of ctl.ports.filter((x) => x.name.startsWith('m_req_'))) {
    const n = p.name.replace(/^m_req_/, 'req_');
    if (p.role === 'output') m.assign(r[n]!, c[p.name]!);
    else m.assign(c[p.name]!, r[n]!);
  }

  // ---- the responder's memory ports ---------------------------------------------------------------
  pass(resp, r, ['rd_valid', 'rd_ready', 'rd_addr', 'rd_data_valid', 'rd_data'], (n) => `mem_${n}`, 'Host memory read (W-aligned beats; data in order, always accepted)');
  pass(resp, r, ['wr_valid', 'wr_ready', 'wr_addr', 'wr_data', 'wr_strb'], (n) => `mem_${n}`, "Host memory write: the atomic unit's write-back (W-aligned beats with strobes)");

  // ---- MPA fencing (RFC 6581 §3, spec/mpa.md §7.4) ---------------------------------------------------
  // The peer's first FPDU has arrived, good or failed (a failed one has still arrived, as the
  // model counts it), once the receive side has decided it: a Terminate it raises is queued by
  // then, so it goes out ahead of the work requests that waited, as the model sends it.
  const arrived = m.reg('rx_arrived', 1, { reset: 0, doc: "the peer's first FPDU has arrived and been decided" });
  const arrives = c.ulpdu_decided!;
  const hold = m.let('tx_fence_hold', fence.and(arrived.not()), { doc: 'the responder holds every FPDU until the initiator\'s first has arrived' });
  m.assign(m.output('fenced', 1, { group: 'Status', doc: "the QP's transmit waits for the peer's first FPDU (MPA fencing, cfg_fence)" }), hold);
  const first = m.output('m_first_valid', 1, { group: 'Status', doc: 'the first FPDU of a fenced QP has arrived: it may send now (one cycle, for the completion queue)' });
  m.assign(first, hold.and(arrives));
  m.sync(() => m.when(arrives, () => m.set(arrived, 1)));

  // ---- transmit: the responder's ULPDUs, for mpa_tx ---------------------------------------------------
  const og = 'AXI4-Stream output: the responder\'s ULPDUs for the shared mpa_tx, tuser the ULPDU length (m_axis)';
  const u = sourceStream({ bytes: W, user: resp.ports.find((p) => p.name === 'm_axis_tuser')!.width }).declare(m, 'm_axis', og);
  m.assign(u.valid, r.m_axis_tvalid!.and(hold.not()));
  m.assign(u.data, r.m_axis_tdata!);
  m.assign(u.keep!, r.m_axis_tkeep!);
  m.assign(u.last!, r.m_axis_tlast!);
  m.assign(u.user!, r.m_axis_tuser!);
  m.assign(r.m_axis_tready!, u.ready.and(hold.not()));

  // ---- status ---------------------------------------------------------------------------------------
  const rxIdle = m.output('rx_idle', 1, { group: 'Status', doc: 'every descriptor taken is handled and its placement written' });
  m.assign(rxIdle, c.idle!.and(c.place_idle!));
  const idle = m.output('idle', 1, { group: 'Status', doc: 'nothing in progress in the receive control and the responder (the shared blocks may still hold a few beats)' });
  m.assign(idle, rxIdle.and(r.idle!).and(c.m_req_valid!.not()).and(r.m_axis_tvalid!.not()));

  m.instance(ctl, 'u_ctl', { clk, rst, ...c });
  m.instance(resp, 'u_resp', { clk, rst, ...r });
  return m.build();
}
