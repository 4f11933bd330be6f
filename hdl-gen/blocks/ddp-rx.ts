import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import type { Signal } from '../core/signal';
import { sinkStream, sourceStream } from '../core/stream';
import { ddpRxCtlModule, type DdpRxCtlOptions } from './ddp-rx-ctl';
import { orqAsk } from './ddp-rx-ctl-queues';
import { DDP_RX_DESC_BITS, ddpRxHdrModule } from './ddp-rx-hdr';
import { ULPDU_LEFT_BITS } from './ddp-tx-output';
import { fifo } from '../lib/fifo';
import { oneHotMux } from '../lib/onehot';
import { ddpRxPlaceModule } from './ddp-rx-place';
import { rdmapTxRespModule } from './rdmap-tx-resp';
import { STAG_TABLE_DEPTH, stagTableModule } from './stag-table';
import { checkRnicWidth } from './rnic-widths';

/**
 * The RNIC receive path of one QP for a W-octet datapath (W = 8..64), with the responses it causes:
 *
 *   s_axis (ULPDUs, as mpa_rx outputs them)
 *     → ddp_rx_hdr   header decode, H1–H7, payload realigned to lane 0
 *     → ddp_rx_place payload FIFO (store and forward until the checks pass) and the realigning
 *                    memory writer (mem_wr)
 *     → ddp_rx_ctl   H8, T1–T7, U1–U5, the RDMAP checks, MSN/receive queue/ORQ/IRRQ, events, the
 *                    Terminate; stag_table for the tagged lookups and Send with Invalidate
 *     → rdmap_tx_resp Read Responses (mem_rd), Atomic Responses (atomic_unit: mem_rd + mem_wr),
 *                    Terminates → m_axis (ULPDUs for mpa_tx)
 *
 * The memory write port is shared by the placement writer and the atomic unit's write-back: the
 * atomic wins when both ask, and a grant is held until its beat is accepted, so the port's payload
 * never changes under a pending valid (AXI4-Stream rules). The memory read port belongs to
 * rdmap_tx_resp. Both ports are W octets wide with W-aligned addresses and per-octet strobes.
 *
 * Rate: 4 KiB RDMA Writes place one beat per cycle (the payload FIFO decouples the header checks,
 * which take 6 cycles per tagged ULPDU, from the data; see bench/ for the Verilator cycle counts).
 */
export interface DdpRxOptions extends DdpRxCtlOptions {
  /** STag table entries (a power of two, 16..65536). */
  readonly stagDepth?: number;
  /** Payload FIFO octets: at least the largest ULPDU payload (cfg_mulpdu − 14). */
  readonly fifoBytes?: number;
}

/** The ports between ddp_rx_ctl and the STag table, as ddp_rx_ctl names them. */
export const STAG_PORTS = {
  request: ['lk_valid', 'lk_stag', 'lk_to', 'lk_len', 'lk_right', 'lk_pd', 'inv_valid', 'inv_stag', 'inv_pd'],
  ready: ['lk_ready', 'inv_ready'],
  response: ['lk_rsp_valid', 'lk_rsp_fault', 'lk_rsp_address', 'inv_rsp_valid', 'inv_rsp_fault'],
} as const;

export function ddpRxModule(bytes: number, opts: DdpRxOptions = {}): Module {
  checkRnicWidth('ddp_rx', bytes);
  const W = bytes;
  const stagDepth = opts.stagDepth ?? STAG_TABLE_DEPTH;
  const hdr = ddpRxHdrModule(W);
  const place = ddpRxPlaceModule(W, opts.fifoBytes);
  // The blocks rnic_top shares between its QPs, here for one.
  const ctl = ddpRxCtlModule({ ...opts, qps: 1 });
  const stags = stagTableModule(stagDepth);
  const resp = rdmapTxRespModule(W, 1);
  const m = new ModuleBuilder(
    `ddp_rx_w${W}`,
    `RNIC receive path of one QP, ${W} octets per beat: DDP/RDMAP decode and checks (RFC 5040, RFC 5041,\n` +
      `RFC 7306; spec/ddp-rdmap.md sections 5-8), STag protection, placement into host memory, the atomic\n` +
      'unit, and the responses it causes (Read Responses, Atomic Responses, the Terminate) as ULPDUs for mpa_tx.',
    { bytes: W, stagDepth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const cg = 'Configuration (static while the QP runs)';
  const cfg = {
    rfc7306: m.input('cfg_rfc7306', 1, { group: cg, doc: 'accept RFC 7306 opcodes 0x8-0xB' }),
    pd: m.input('cfg_pd', 16, { group: cg, doc: "the stream's protection domain" }),
    ird: m.input('cfg_ird', 16, { group: cg, doc: 'inbound Read/Atomic Requests allowed' }),
    ord: m.input('cfg_ord', 16, { group: cg, doc: 'outbound Read/Atomic Requests allowed outstanding (ORD)' }),
    msn: m.input('cfg_initial_msn', 32, { group: cg, doc: 'first MSN of every queue, both ways (loaded in reset)' }),
    mulpdu: m.input('cfg_mulpdu', 16, { group: cg, doc: 'largest ULPDU the peer accepts (Read Response segments)' }),
    bigEndian: m.input('cfg_big_endian', 1, { group: cg, doc: 'atomic targets are big-endian in host memory' }),
  };

  /** Exposes every port of `child` named in `names` as a port of this module, renamed by `rename`. */
  const conns: Record<string, Record<string, Expr>> = { hdr: {}, place: {}, ctl: {}, stags: {}, resp: {} };
  const expose = (key: keyof typeof conns, child: Module, names: readonly string[], rename: (n: string) => string, group: string) => {
    for (const n of names) conns[key]![n] = m.portLike(child, n, rename(n), group);
  };
  const same = (n: string) => n;
  const wire = (name: string, width: number) => m.wire(name, width);

  // ULPDUs in.
  const s = sinkStream({ bytes: W, user: 1 }).declare(m, 's_axis', 'AXI4-Stream input: one ULPDU per packet, tuser on tlast = MPA passed its FPDU (as mpa_rx m_axis)');
  const llpErr = m.input('s_llp_err', 8, { group: 'MPA verdict', doc: "mpa_rx err_code: the LLP error code of a ULPDU that ends with tuser 0" });
  // STag table configuration, posted receive buffers, the ORQ, local faults: straight through.
  const stagCfg = stags.ports.filter((p) => p.name.startsWith('cfg_')).map((p) => p.name);
  expose('stags', stags, stagCfg, (n) => `stag_${n}`, 'STag table configuration write (stag_cfg_*)');
  expose('ctl', ctl, ['s_recv_valid', 's_recv_ready', 's_recv_addr', 's_recv_len'], same, 'Posted receive buffers of QN 0 (s_recv)');
  const og = 'ORQ: outbound Read and Atomic Requests in send order (s_orq; taken while fewer than cfg_ord are outstanding)';
  expose('ctl', ctl, ['s_orq_atomic', 's_orq_stag', 's_orq_to', 's_orq_size', 's_orq_request_id'], same, og);
  // The port waits while ORD are outstanding (ddp_rx_ctl answers each entry: taken or refused).
  const orqValid = m.portLike(ctl, 's_orq_valid', 's_orq_valid', og);
  const orqReady = m.portLike(ctl, 's_orq_ready', 's_orq_ready', og);
  const ack = { ready: wire('ctl_s_orq_ready', 1), ack: wire('ctl_m_orq_ack', 1), ok: wire('ctl_m_orq_ack_ok', 1), done: wire('ctl_m_orq_done', 1) };
  const orq = orqAsk(m, { valid: orqValid, ready: ack.ready, ack: ack.ack, ackOk: ack.ok, done: ack.done, taken: orqValid.and(orqReady) });
  m.assign(orqReady, orq.granted);
  Object.assign(conns.ctl!, { s_orq_valid: orq.ask, s_orq_ready: ack.ready, m_orq_ack: ack.ack, m_orq_ack_ok: ack.ok, m_orq_done: ack.done });
  expose('ctl', ctl, ['inject_valid', 'inject_err'], same, 'Local faults (a pulse each)');
  conns.ctl!.abort_valid = m.input('abort_req', 1, { group: 'Local faults (a pulse each)', doc: 'the ULP tears the stream down: Terminate RDMAP local catastrophic, no headers' });
  const evtPorts = ctl.ports.filter((p) => p.name.startsWith('m_evt_') && p.name !== 'm_evt_qp').map((p) => p.name);
  expose('ctl', ctl, evtPorts, same, 'Events: completions, Terminates, closure (m_evt)');
  expose('ctl', ctl, ['stat_rx_stopped', 'stat_tx_stopped', 'stat_irrq_used'], (n) => n.replace(/^stat_/, ''), 'Status (two cycles late)');
  // One QP: QP 0 everywhere, and its context loaded from the static configuration after reset.
  for (const n of ['s_desc_qp', 's_recv_qp', 's_orq_qp', 'inject_qp', 'abort_qp', 'stat_qp', 'chk_qp']) conns.ctl![n] = lit(1, 0);
  const cfgLoaded = m.reg('cfg_loaded', 1, { reset: 0, doc: "the QP's context has been loaded into ddp_rx_ctl since reset" });
  const cfgReady = wire('ctl_cfg_ready', 1);
  Object.assign(conns.ctl!, { cfg_valid: cfgLoaded.not(), cfg_ready: cfgReady, cfg_qp: lit(1, 0) });
  m.sync(() => m.when(cfgReady, () => m.set(cfgLoaded, 1)));
  const unused = (names: readonly string[], why: string) => {
    for (const n of names) {
      const w = wire(`ctl_${n}`, ctl.ports.find((p) => p.name === n)!.width);
      conns.ctl![n] = w;
      m.allowUnused(w, why);
    }
  };
  unused(['inject_ready', 'abort_ready'], 'one fault at a time: the control takes each within a few cycles');
  unused(['m_evt_qp', 'm_first_qp', 'm_stopped', 'm_stopped_qp', 'err_recv_full', 'm_first_valid', 'stat_fenced', 'stat_mpa_err', 'chk_tx_stopped', 'm_cfg_done'], 'one QP, not fenced: rx_stopped / tx_stopped say it');
  conns.ctl!.m_first_ready = lit(1, 1);

  // Memory ports.
  const mg = 'Host memory write (W-aligned beats with strobes)';
  const memWr = {
    valid: m.output('mem_wr_valid', 1, { group: mg }),
    ready: m.input('mem_wr_ready', 1, { group: mg }),
    addr: m.output('mem_wr_addr', 64, { group: mg }),
    data: m.output('mem_wr_data', 8 * W, { group: mg, doc: 'lane j = octet at mem_wr_addr + j' }),
    strb: m.output('mem_wr_strb', W, { group: mg }),
  };
  expose('resp', resp, ['rd_valid', 'rd_ready', 'rd_addr', 'rd_data_valid', 'rd_data'], (n) => `mem_${n}`, 'Host memory read (W-aligned beats; data in order, always accepted)');
  // ULPDUs out.
  const o = sourceStream({ bytes: W, user: ULPDU_LEFT_BITS }).declare(m, 'm_axis', 'AXI4-Stream output: response and Terminate ULPDUs for mpa_tx (m_axis); tuser = octets of the ULPDU from this beat on');
  const idle = m.output('idle', 1, { group: 'Status', doc: 'nothing in progress: every placement written, every response sent' });
  const rxIdle = m.output('rx_idle', 1, { group: 'Status', doc: 'the receive side is idle: every descriptor handled, every placement written' });

  // ---- ddp_rx_hdr ---------------------------------------------------------------------------------
  const hp = { data: wire('pay_tdata', 8 * W), keep: wire('pay_tkeep', W), valid: wire('pay_tvalid', 1), last: wire('pay_tlast', 1), ready: wire('pay_tready', 1) };
  const desc = { data: wire('desc_tdata', DDP_RX_DESC_BITS), valid: wire('desc_tvalid', 1), ready: wire('desc_tready', 1) };
  // MPA's verdict arrives with each ULPDU's last beat and its descriptor leaves ddp_rx_hdr later:
  // a small FIFO carries it, one entry per ULPDU, in order (the input waits when it is full).
  const hdrReady = wire('hdr_s_tready', 1);
  const verdictPop = wire('verdict_pop', 1);
  const verdictPush = wire('verdict_push', 1);
  const VERDICTS = 4;
  const verdict = fifo(m, 'verdict', 9, VERDICTS, { push: verdictPush, data: cat(llpErr, s.user!.not()), pop: verdictPop });
  // Its full flag as a flip-flop beside the pointers: it gates s_axis in front of ddp_rx_hdr's
  // input handshake, where a pointer compare would add levels to the header's own logic.
  const verdictFull = m.reg('verdict_full', 1, { reset: 0, doc: 'the verdict FIFO is full' });
  const verdictCount = verdict.count;
  m.sync(() => m.set(verdictFull, oneHotMux([[verdictPush.and(verdictPop.not()), verdictCount.eq(VERDICTS - 1)], [verdictPop.and(verdictPush.not()), lit(1, 0)]], verdictFull)));
  m.assign(s.ready, hdrReady.and(verdictFull.not()));
  m.assign(verdictPush, s.valid.and(s.ready).and(s.last!));
  m.instance(hdr, 'u_hdr', {
    clk, rst, cfg_rfc7306: cfg.rfc7306,
    s_axis_tdata: s.data, s_axis_tkeep: s.keep!, s_axis_tvalid: s.valid.and(verdictFull.not()), s_axis_tready: hdrReady, s_axis_tlast: s.last!,
    m_axis_tdata: hp.data, m_axis_tkeep: hp.keep, m_axis_tvalid: hp.valid, m_axis_tready: hp.ready, m_axis_tlast: hp.last,
    m_desc_tdata: desc.data, m_desc_tvalid: desc.valid, m_desc_tready: desc.ready,
  });

  // ---- ddp_rx_ctl ---------------------------------------------------------------------------------
  const wires = (child: Module, prefix: string, names: readonly string[]) => Object.fromEntries(names.map((n) => [n, wire(`${prefix}${n}`, child.ports.find((p) => p.name === n)!.width)])) as Record<string, Signal>;
  // Its own STag table: always ready, one lookup and one invalidate a cycle.
  const lk = wires(ctl, 'ctl_', STAG_PORTS.request);
  const lkRsp = wires(stags, 'stag_', ['rsp_valid', 'rsp_fault', 'rsp_address', 'inv_rsp_valid', 'inv_fault']);
  Object.assign(conns.ctl!, lk, {
    lk_ready: lit(1, 1), inv_ready: lit(1, 1),
    lk_rsp_valid: lkRsp.rsp_valid!, lk_rsp_fault: lkRsp.rsp_fault!, lk_rsp_address: lkRsp.rsp_address!,
    inv_rsp_valid: lkRsp.inv_rsp_valid!, inv_rsp_fault: lkRsp.inv_fault!,
  });
  m.instance(stags, 'u_stags', { clk, rst, ...lk, ...lkRsp, ...conns.stags });
  const cmd = wires(ctl, 'ctl_', ['m_cmd_valid', 'm_cmd_ready', 'm_cmd_addr', 'm_cmd_discard']);
  const reqNames = ctl.ports.filter((p) => p.name.startsWith('m_req_')).map((p) => p.name);
  const req = wires(ctl, 'ctl_', reqNames);
  const placeIdle = wire('place_idle', 1);
  const placeDone = wire('place_done', 1);
  const ctlIdle = wire('ctl_idle', 1);
  const irrqIdle = wire('ctl_irrq_idle', 1);
  const respIdle = wire('resp_idle', 1);
  m.instance(ctl, 'u_ctl', {
    clk, rst, cfg_pd: cfg.pd, cfg_ird: cfg.ird, cfg_ord: cfg.ord, cfg_initial_msn: cfg.msn, cfg_mulpdu: cfg.mulpdu, cfg_big_endian: cfg.bigEndian, cfg_fence: lit(1, 0),
    s_desc_tdata: desc.data, s_desc_tvalid: desc.valid, s_desc_tready: desc.ready,
    s_desc_mpa_bad: verdict.head.bit(0), s_desc_mpa_code: verdict.head.slice(8, 1),
    ...cmd,
    ...req,
    idle: ctlIdle,
    irrq_idle: irrqIdle,
    place_idle: placeIdle,
    place_done: placeDone,
    ...conns.ctl,
  });

  // ---- ddp_rx_place -------------------------------------------------------------------------------
  const pw = { valid: wire('place_wr_valid', 1), ready: wire('place_wr_ready', 1), addr: wire('place_wr_addr', 64), data: wire('place_wr_data', 8 * W), strb: wire('place_wr_strb', W) };
  m.instance(place, 'u_place', {
    clk, rst,
    s_axis_tdata: hp.data, s_axis_tkeep: hp.keep, s_axis_tvalid: hp.valid, s_axis_tready: hp.ready, s_axis_tlast: hp.last,
    s_cmd_valid: cmd.m_cmd_valid!, s_cmd_ready: cmd.m_cmd_ready!, s_cmd_addr: cmd.m_cmd_addr!, s_cmd_discard: cmd.m_cmd_discard!,
    wr_valid: pw.valid, wr_ready: pw.ready, wr_addr: pw.addr, wr_data: pw.data, wr_strb: pw.strb,
    idle: placeIdle,
    done: placeDone,
  });

  // ---- rdmap_tx_resp ------------------------------------------------------------------------------
  const aw = { valid: wire('atomic_wr_valid', 1), ready: wire('atomic_wr_ready', 1), addr: wire('atomic_wr_addr', 64), data: wire('atomic_wr_data', 8 * W), strb: wire('atomic_wr_strb', W) };
  const respTid = wire('resp_tid', 1);
  m.allowUnused(respTid, 'one QP');
  const respReq = Object.fromEntries(reqNames.map((n) => [n.replace(/^m_req_/, 'req_'), req[n]!]));
  m.instance(resp, 'u_resp', {
    clk, rst,
    ...respReq,
    m_axis_tid: respTid,
    ...conns.resp,
    wr_valid: aw.valid, wr_ready: aw.ready, wr_addr: aw.addr, wr_data: aw.data, wr_strb: aw.strb,
    m_axis_tdata: o.data, m_axis_tkeep: o.keep!, m_axis_tvalid: o.valid, m_axis_tready: o.ready, m_axis_tlast: o.last!, m_axis_tuser: o.user!,
    idle: respIdle,
  });

  // ---- memory write arbiter: the atomic's write-back first; a grant holds until accepted ----------
  const held = m.reg('wr_held', 1, { reset: 0, doc: 'the beat on mem_wr was offered and not yet accepted' });
  const heldAtomic = m.reg('wr_held_atomic', 1, { reset: 0, doc: 'which requester the held beat belongs to' });
  const pickAtomic = m.let('wr_pick_atomic', mux(held, heldAtomic, aw.valid), { doc: 'the write-back of the atomic unit owns mem_wr this cycle' });
  m.assign(memWr.valid, mux(pickAtomic, aw.valid, pw.valid));
  m.assign(memWr.addr, mux(pickAtomic, aw.addr, pw.addr));
  m.assign(memWr.data, mux(pickAtomic, aw.data, pw.data));
  m.assign(memWr.strb, mux(pickAtomic, aw.strb, pw.strb));
  m.assign(aw.ready, pickAtomic.and(memWr.ready));
  m.assign(pw.ready, pickAtomic.not().and(memWr.ready));
  m.assign(verdictPop, desc.valid.and(desc.ready));
  m.sync(() => {
    m.set(held, memWr.valid.and(memWr.ready.not()));
    m.set(heldAtomic, pickAtomic);
  });
  // A whole ULPDU whose descriptor has not reached ddp_rx_ctl yet (its verdict waits in the FIFO)
  // is still being received.
  const rxDone = m.let('rx_done', ctlIdle.and(placeIdle).and(verdict.empty), { doc: 'every ULPDU taken so far is handled and placed' });
  m.assign(rxIdle, rxDone);
  m.assign(idle, rxDone.and(respIdle).and(irrqIdle));
  return m.build();
}
