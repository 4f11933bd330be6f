import { Qn, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { Opcode } from '../../ts-model/rdmap/constants';
import { ALL_ERROR_CODES, DdpError, LlpError, RdmapError, type ErrorCode } from '../../ts-model/terminate-codes';
import { Expr, cat, lit, mux } from '../core/expr';
import type { Signal } from '../core/signal';
import { HdlError } from '../core/location';
import { ModuleBuilder, type Module } from '../core/module';
import { ATOMIC_REQUEST, ATOMIC_RESPONSE, IMMEDIATE_DATA, READ_REQUEST, TERMINATE, type WireField } from '../../ts-model/wire/layouts';
import { portGroup } from '../lib/ports';
import { DDP_RX_DESC, ERROR_WORD, errBits, IRRQ_ATOMIC, IRRQ_READ, ORQ_ENTRY, RECV_BUFFER, RX_EVENT_FIELDS } from './records';
import { fifo } from '../lib/fifo';
import { anyOf, oneHotMux, priorityMux } from '../lib/onehot';
import { rnicNames } from './names';
import { stateMachine } from '../lib/fsm';
import { RESP_KIND } from './rdmap-tx-resp';
import { STAG_FAULTS, STAG_INV_FAULTS, STAG_RIGHT_BITS } from './stag-table';

/**
 * The receive path's placement control (spec/ddp-rdmap.md §5.2–§5.6, §6.3, §7, §8): one QP's
 * DDP/RDMAP state and every check after the header checks, in the model's order
 * (ts-model/rnic/endpoint.ts `receive`, `receiveTagged`, `receiveUntagged`, `deliver`, `fail`).
 *
 * It takes one descriptor of ddp_rx_hdr per ULPDU (s_desc) and decides, one ULPDU at a time:
 * - where the ULPDU's payload goes: one m_cmd per descriptor with has_payload (the payload waits in
 *   ddp_rx_place's FIFO), an address or discard;
 * - the tagged checks H8 and T1–T7 (T1–T5 through the STag table's lookup port, T6/T7 against the
 *   ORQ head), the untagged checks U1–U5 (MSN per QN, posted receive buffers, the open message of
 *   QN 0), and the RDMAP checks after delivery (Read Request source, IRD, Atomic target and
 *   alignment, Send with Invalidate through the STag table's invalidate port, Atomic Response
 *   against the ORQ head);
 * - the responses: Read and Atomic Requests enter the IRRQ (m_req, read by rdmap_tx_resp in arrival
 *   order); on the first error the Terminate with its header copies (spec/ddp-rdmap.md §2.4, §8);
 * - the events (m_evt): receive completions, requester completions (Read, Atomic), Terminate sent,
 *   Terminate received, stream closed.
 * MPA's verdict on the FPDU (s_desc_mpa_bad/code, mpa_rx's tuser and err_code) comes before every
 * check: a failed FPDU was never delivered, so only the LLP error is reported (model `llpError`).
 * After the first error everything later is dropped (its payload discarded) and the IRRQ is
 * flushed: exactly one Terminate per stream (§5.6, §8 rule 5).
 *
 * The implementation fixes the model's defaults (ts-model/rnic/options.ts): Immediate Data lands
 * in the event only, the Terminate's DDP Segment Length is the whole segment, atomics share IRD
 * with Reads, no draft-00 Swap. A request leaves the IRRQ (and stops counting against cfg_ird) when
 * rdmap_tx_resp takes it, as the model's answerRequests does; the IRRQ holds at most irrqDepth
 * requests, so an IRD above that makes the control wait for room instead of failing. Outbound,
 * s_orq takes a Read or Atomic Request while fewer than cfg_ord are outstanding (and the ORQ,
 * orqDepth entries, has room): an ORD of 0x3FFF ("do not negotiate", RFC 6581 §9.1) or anything
 * above the depth leaves the depth as the limit.
 *
 * Timing: s_desc is taken into the input register desc_in whenever it is empty (s_desc_tready is
 * that flip-flop: one cycle from s_desc to IDLE), and IDLE takes the descriptor from there when
 * m_cmd and m_evt are free. m_req_valid and s_orq_ready are flip-flops too, their next values
 * computed from this cycle's pushes, pops and flushes (exact: no cycle lost, but s_orq_ready's first
 * cycle after reset). CHECK registers the verdict of the checks that need no lookup; DECIDE acts
 * on it for an untagged ULPDU, POST for a tagged one (after its lookup, which CHECK starts whatever
 * the verdict), so no cycle both checks and acts. A
 * Write takes 6 cycles (IDLE, CHECK, LOOK, three cycles of STag lookup latency, POST), an untagged
 * Send 3 (IDLE, CHECK, DECIDE), a tagged ULPDU without data 4 (IDLE, CHECK, DECIDE, POST), a Read
 * or Atomic Request 7 (DECIDE, then LOOK to POST); LOOK and INV wait for the table's ready (a table
 * shared by the QPs takes one lookup a cycle). POST waits up to two cycles after an entry enters
 * the empty ORQ (its Read Response checks are registered ahead). A Read or Atomic Request waits in
 * POST until every placement before it has been written (place_idle) and the IRRQ had room in the
 * cycle before, so that its response reads what earlier Writes and Sends placed (RFC 5040 §5.5
 * rule 6).
 */
export { RX_EVENT } from './names';

export interface DdpRxCtlOptions {
  /** Inbound Read/Atomic Requests waiting for rdmap_tx_resp. */
  readonly irrqDepth?: number;
  /** Outstanding outbound Reads/Atomics (the ORQ, pushed by the transmit side). */
  readonly orqDepth?: number;
  /** Posted receive buffers of QN 0. */
  readonly rqDepth?: number;
}

/** The per-ULPDU state machine: checks, the STag lookup and its wait, posting, an invalidation and its wait. */
const STATES = ['IDLE', 'CHECK', 'DECIDE', 'LOOK', 'LWAIT', 'POST', 'INV', 'IWAIT'] as const;
const MEANING = {
  IDLE: 'waiting for a ULPDU descriptor',
  CHECK: 'the RFC 5040/5041 checks of the descriptor (their verdict registered)',
  DECIDE: 'acting on the verdict: an untagged ULPDU, or a failed FPDU',
  LOOK: 'STag lookup offered (until the table takes it)',
  LWAIT: 'waiting for the STag lookup',
  POST: 'posting the placement command and the event',
  INV: 'invalidation of an STag offered (until the table takes it)',
  IWAIT: 'waiting for the invalidation',
} as const;

const right = (r: (typeof STAG_RIGHT_BITS)[number]): number => 1 << STAG_RIGHT_BITS.indexOf(r);
const faultCode = (f: (typeof STAG_FAULTS)[number]): number => STAG_FAULTS.indexOf(f);

export function ddpRxCtlModule(opts: DdpRxCtlOptions = {}): Module {
  const irrqDepth = opts.irrqDepth ?? 8;
  const orqDepth = opts.orqDepth ?? 8;
  const rqDepth = opts.rqDepth ?? 16;
  const m = new ModuleBuilder(
    'ddp_rx_ctl',
    'DDP/RDMAP receive control of one QP (RFC 5040, RFC 5041 section 7.1, RFC 7306; spec/ddp-rdmap.md\n' +
      'sections 5-8): tagged checks H8 and T1-T7 through the STag table, untagged checks U1-U5 with MSN per QN\n' +
      'and posted receive buffers, RDMAP checks after delivery, placement commands, the IRRQ of Read and\n' +
      'Atomic Requests, completion events, and exactly one Terminate on the first error (then drop all).',
    { irrqDepth, orqDepth, rqDepth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);
  const cg = 'Configuration (static)';
  const cfgPd = m.input('cfg_pd', 16, { group: cg, doc: "the stream's protection domain" });
  const cfgIrd = m.input('cfg_ird', 16, { group: cg, doc: 'inbound Read/Atomic Requests allowed in the IRRQ' });
  const cfgOrd = m.input('cfg_ord', 16, { group: cg, doc: 'outbound Read/Atomic Requests allowed outstanding (ORD; above the ORQ depth, the depth)' });
  const cfgMsn = m.input('cfg_initial_msn', 32, { group: cg, doc: 'first MSN of every queue (loaded while rst is high)' });

  const dg = 'Descriptor input from ddp_rx_hdr (s_desc)';
  const dData = m.input('s_desc_tdata', DDP_RX_DESC.width, { group: dg, record: DDP_RX_DESC });
  const dValid = m.input('s_desc_tvalid', 1, { group: dg });
  const dReady = m.output('s_desc_tready', 1, { group: dg });
  const dMpaBad = m.input('s_desc_mpa_bad', 1, { group: dg, doc: "MPA's verdict on this ULPDU's FPDU: it failed (mpa_rx m_axis_tuser = 0)" });
  const dMpaCode = m.input('s_desc_mpa_code', 8, { group: dg, doc: 'its LLP error code (Terminate 0x2/0x0/code), with s_desc_mpa_bad' });

  const rg = 'Posted receive buffers of QN 0 (s_recv)';
  const rcvValid = m.input('s_recv_valid', 1, { group: rg });
  const rcvReady = m.output('s_recv_ready', 1, { group: rg });
  const rcv = portGroup(m, 's_recv', RECV_BUFFER, 'input', rg);

  const og = 'ORQ: outbound Read and Atomic Requests, in the order they were sent (s_orq)';
  const orqValid = m.input('s_orq_valid', 1, { group: og });
  const orqReady = m.output('s_orq_ready', 1, { group: og });
  const orqIn = portGroup(m, 's_orq', ORQ_ENTRY, 'input', og);

  const fg = 'Local faults (a pulse each)';
  const injValid = m.input('inject_valid', 1, { group: fg, doc: 'the next ULPDU that passes the header checks meets this local failure' });
  const injErr = m.input('inject_err', 14, { group: fg, doc: '{code, etype, layer}' });
  const abortIn = m.input('abort_req', 1, { group: fg, doc: 'the ULP tears the stream down: Terminate RDMAP local catastrophic, no headers' });

  const lg = 'STag table lookup (taken with lk_ready; answered 2 cycles later)';
  const lkValid = m.output('lk_valid', 1, { group: lg });
  const lkReady = m.input('lk_ready', 1, { group: lg, doc: 'the table takes the lookup (a table shared by the QPs serves one a cycle)' });
  const lkStag = m.output('lk_stag', 32, { group: lg });
  const lkTo = m.output('lk_to', 64, { group: lg });
  const lkLen = m.output('lk_len', 32, { group: lg });
  const lkRight = m.output('lk_right', 5, { group: lg });
  const lkPd = m.output('lk_pd', 16, { group: lg });
  const lkRspValid = m.input('lk_rsp_valid', 1, { group: lg });
  const lkFault = m.input('lk_rsp_fault', 3, { group: lg });
  const lkAddr = m.input('lk_rsp_address', 64, { group: lg });
  const ig = 'STag table invalidate (taken with inv_ready; answered 2 cycles later)';
  const invValid = m.output('inv_valid', 1, { group: ig });
  const invReady = m.input('inv_ready', 1, { group: ig, doc: 'the table takes the invalidate' });
  const invStag = m.output('inv_stag', 32, { group: ig });
  const invPd = m.output('inv_pd', 16, { group: ig });
  const invRspValid = m.input('inv_rsp_valid', 1, { group: ig });
  const invFault = m.input('inv_rsp_fault', 2, { group: ig });

  const pg = 'Placement commands to ddp_rx_place (m_cmd): one per descriptor with has_payload';
  const cmdValidO = m.output('m_cmd_valid', 1, { group: pg });
  const cmdReady = m.input('m_cmd_ready', 1, { group: pg });
  const cmdAddrO = m.output('m_cmd_addr', 64, { group: pg });
  const cmdDiscardO = m.output('m_cmd_discard', 1, { group: pg });
  const placeIdle = m.input('place_idle', 1, { group: pg, doc: 'every command accepted so far has been written (ddp_rx_place idle)' });

  const qg = 'Responses to rdmap_tx_resp (m_req): the IRRQ head, or the Terminate';
  const reqValid = m.output('m_req_valid', 1, { group: qg });
  const reqReady = m.input('m_req_ready', 1, { group: qg });
  const q = (name: string, width: number, doc?: string) => m.output(`m_req_${name}`, width, { group: qg, ...(doc ? { doc } : {}) });
  const reqKind = q('kind', 2, '0 Read Response, 1 Atomic, 2 Terminate');
  const reqSinkStag = q('sink_stag', 32);
  const reqSinkTo = q('sink_to', 64);
  const reqSrcAddr = q('src_addr', 64, 'translated source address (0 for a zero-length Read)');
  const reqSize = q('size', 32);
  const reqAopcode = q('aopcode', 4);
  const reqAddr = q('addr', 64, 'translated, 8-octet aligned target');
  const reqAddSwap = q('add_swap', 64);
  const reqAddSwapMask = q('add_swap_mask', 64);
  const reqCompare = q('compare', 64);
  const reqCompareMask = q('compare_mask', 64);
  const reqRequestId = q('request_id', 32);
  const reqTermLayer = q('term_layer', 4);
  const reqTermEtype = q('term_etype', 4);
  const reqTermCode = q('term_code', 8);
  const reqTermM = q('term_m', 1);
  const reqTermD = q('term_d', 1);
  const reqTermR = q('term_r', 1);
  const reqTermSegLen = q('term_seg_len', 16);
  const reqTermTagged = q('term_tagged', 1, 'the copied DDP header is tagged (14 octets; else 18)');
  const reqTermDdpHdr = q('term_ddp_hdr', 8 * UNTAGGED_HEADER_SIZE, 'octet j in [8j+7:8j]');
  const reqTermRdmaHdr = q('term_rdma_hdr', 224, 'the Read Request header, octet j in [8j+7:8j]');

  const eg = 'Events (m_evt): completions, Terminates, closure';
  const evtValidO = m.output('m_evt_valid', 1, { group: eg });
  const evtReady = m.input('m_evt_ready', 1, { group: eg });
  const evtPorts = portGroup(m, 'm_evt', RX_EVENT_FIELDS, 'output', eg);

  const sg = 'Status';
  const rxStoppedO = m.output('rx_stopped', 1, { group: sg });
  const txStoppedO = m.output('tx_stopped', 1, { group: sg });
  const idleO = m.output('idle', 1, { group: sg, doc: 'no ULPDU in progress or waiting in desc_in, and no command or event waiting' });
  const irrqCountO = m.output('irrq_used', Math.log2(irrqDepth) + 1, { group: sg });
  const decidedO = m.output('ulpdu_decided', 1, { group: sg, doc: 'a ULPDU has been decided since reset (its checks done, its Terminate queued if it failed) and none is in hand' });

  // ---- Error codes -------------------------------------------------------------------------------
  const K = rnicNames(m);
  const eOpcode = K.err(RdmapError.UNEXPECTED_OPCODE);
  const eStream = K.err(RdmapError.STREAM_CATASTROPHIC);
  const eLocal = K.err(RdmapError.LOCAL_CATASTROPHIC);
  const eProtInv = K.err(RdmapError.PROTECTION_CANNOT_INVALIDATE);
  const eOpInv = K.err(RdmapError.OPERATION_CANNOT_INVALIDATE);
  const eDdpLocal = K.err(DdpError.LOCAL_CATASTROPHIC);
  const eStag = K.err(DdpError.INVALID_STAG);
  const eBounds = K.err(DdpError.BASE_BOUNDS);
  const eQn = K.err(DdpError.INVALID_QN);
  const eNoBuf = K.err(DdpError.NO_BUFFER);
  const eMsn = K.err(DdpError.MSN_RANGE);
  const eMo = K.err(DdpError.INVALID_MO);
  const eTooLong = K.err(DdpError.TOO_LONG);
  /** STag lookup fault → Terminate: DDP tagged (ddpTaggedError) and RDMAP protection (rdmapProtectionError). */
  const ddpTagged: Record<string, ErrorCode> = { 'invalid-stag': DdpError.INVALID_STAG, 'pd-mismatch': DdpError.STAG_NOT_ASSOCIATED, access: DdpError.INVALID_STAG, 'to-wrap': DdpError.TO_WRAP, bounds: DdpError.BASE_BOUNDS };
  const rdmapProt: Record<string, ErrorCode> = { 'invalid-stag': RdmapError.INVALID_STAG, 'pd-mismatch': RdmapError.STAG_NOT_ASSOCIATED, access: RdmapError.ACCESS_RIGHTS, 'to-wrap': RdmapError.TO_WRAP, bounds: RdmapError.BASE_BOUNDS };
  // A fault code the table never sends (past its last) counts as an invalid STag: every fault's
  // code is non-zero, as check_fails below assumes.
  const faultTable = (table: Record<string, ErrorCode>, fault: Expr) =>
    STAG_FAULTS.slice(2).reduce<Expr>((acc, f) => mux(fault.eq(faultCode(f)), K.err(table[f]!), acc), K.err(table['invalid-stag']!));

  /**
   * An error and what its Terminate copies (spec/ddp-rdmap.md §8): `md`, the DDP segment length and
   * header (M, D) unless the error is an LLP one or RDMAP local catastrophic (etype 0); `r`, the
   * RDMAP header of a Read Request when the error is an RDMAP remote protection one (etype 1).
   * Derived per check, so a constant code gives constant bits (no decoding after the first-failing
   * select).
   */
  interface Verdict { readonly code: Expr; readonly md: Expr; readonly r: Expr }
  const verdictOf = (e: Expr): Verdict => {
    const layer = e.slice(1, 0);
    const etype = e.slice(5, 2);
    return { code: e, md: layer.ne(2).and(layer.eq(0).and(etype.eq(0)).not()), r: layer.eq(0).and(etype.eq(1)) };
  };
  const packVerdict = (v: Verdict) => cat(v.r, v.md, v.code);
  const unpackVerdict = (x: Expr): Verdict => ({ code: x.slice(13, 0), md: x.slice(14, 14), r: x.slice(15, 15) });

  // ---- The descriptor being processed ------------------------------------------------------------
  const d = m.reg('desc', DDP_RX_DESC.width, { doc: 'the descriptor of the ULPDU in progress', record: DDP_RX_DESC });
  const mpaBad = m.reg('mpa_bad', 1, { doc: 'MPA failed the FPDU of the ULPDU in progress' });
  const mpaCode = m.reg('mpa_code', 8);
  const mpaClosed = m.reg('mpa_closed', 1, { doc: 'MPA reports the connection lost (no Terminate follows)' });
  const F = DDP_RX_DESC.view(d, { m, prefix: 'desc' });
  m.allowUnused(d, 'dv was checked by ddp_rx_hdr (H2); the Terminate copies it within ctrl0');
  /** A field of the RDMAP part (ts-model/wire/layouts.ts) as a big-endian number. */
  const fieldOf = (rdmap: Expr, f: WireField) => cat(...Array.from({ length: f.size }, (_, i) => rdmap.slice(8 * (f.offset + i) + 7, 8 * (f.offset + i))));
  const R = (f: WireField) => fieldOf(F.rdmap, f);
  const aopcode = R(ATOMIC_REQUEST.aopcode_word).slice(3, 0);
  const ok = F.ok;
  const hasPayload = F.has_payload;
  const err = F.err;
  const ulpduLen = F.ulpdu_len;
  const plen = m.let('payload_len', F.payload_len.zext(32), { doc: 'data octets after the DDP header (0 without has_payload)' });
  const t = F.t;
  const last = F.l;
  const op = F.opcode;
  const stag = F.stag;
  const to = F.to;
  const qn = F.qn;
  const msn = F.msn;
  const mo = F.mo;
  const isOpOf = (o: Expr, ...ops: Expr[]) => ops.map((x) => o.eq(x)).reduce((a, b) => a.or(b));
  const isOp = (...ops: Expr[]) => isOpOf(op, ...ops);
  /** The untagged queue of an opcode (RFC 5040 section 4.3, RFC 7306 section 10.2). */
  const qnOfOp = (o: Expr) =>
    mux(isOpOf(o, K.OP.READ_REQUEST, K.OP.ATOMIC_REQUEST), K.QN.READ_REQUEST, mux(o.eq(K.OP.TERMINATE), K.QN.TERMINATE, mux(o.eq(K.OP.ATOMIC_RESPONSE), K.QN.ATOMIC_RESPONSE, K.QN.SEND)));

  /*
   * Read ahead: what CHECK decides from the descriptor and the stream's state is computed from
   * s_desc in the cycle it is taken and registered beside it, so CHECK starts from registers (issue
   * 10's depth budget). The state read here (expected MSNs, the open messages) changes only in
   * DECIDE and POST, never in IDLE where a descriptor is taken, so the registered value is the one
   * CHECK would compute. The queues, which do change in IDLE, are read as CHECK will see them (below).
   */
  // The descriptor input register: s_desc_tready is "it is empty", a flip-flop, so ddp_rx_hdr's
  // descriptor handshake (and what hangs on it there) sees none of this block's state. A descriptor
  // waits in it until IDLE takes it; the control takes one per three cycles at most (IDLE, CHECK,
  // DECIDE), so refilling it in the cycle after a take costs no rate, and one cycle of latency.
  const inValid = m.reg('desc_in_valid', 1, { reset: 0, doc: 'a descriptor waits in desc_in for IDLE' });
  const inData = m.reg('desc_in', DDP_RX_DESC.width, { doc: 'the next descriptor, as s_desc_tdata gave it', record: DDP_RX_DESC });
  const inMpaBad = m.reg('desc_in_mpa_bad', 1, { doc: 's_desc_mpa_bad with it' });
  const inMpaCode = m.reg('desc_in_mpa_code', 8, { doc: 's_desc_mpa_code with it' });
  const incoming = DDP_RX_DESC.view(inData);
  const ahead: [Signal, Expr][] = [];
  const readAhead = (name: string, width: number, doc: string, value: (D: typeof incoming) => Expr): Signal => {
    const r = m.reg(name, width, { doc });
    ahead.push([r, value(incoming)]);
    return r;
  };
  const isSendOp = (o: Expr) => isOpOf(o, K.OP.SEND, K.OP.SEND_SE, K.OP.SEND_INVALIDATE, K.OP.SEND_SE_INVALIDATE);
  const isSend = readAhead('is_send', 1, 'the ULPDU is a Send (any of the four)', (D) => isSendOp(D.opcode));
  const qnOf = readAhead('qn_expected', 2, 'the untagged queue of the opcode', (D) => qnOfOp(D.opcode));
  const h1Of = (D: typeof incoming) => D.ok.not().and(D.ulpdu_len.lt(mux(D.t, lit(16, TAGGED_HEADER_SIZE), lit(16, UNTAGGED_HEADER_SIZE))));
  const h1 = readAhead('h1_short', 1, 'H1: the ULPDU is shorter than its DDP header (no header to copy)', h1Of);
  const isTermOp = readAhead('term_opcode', 1, 'the ULPDU is a Terminate: an error closes the stream, nobody answers', (D) => D.opcode.eq(K.OP.TERMINATE).and(h1Of(D).not()));
  const hasLen = readAhead('has_len', 1, 'the ULPDU carries data octets', (D) => D.payload_len.ne(0));

  // ---- State ------------------------------------------------------------------------------------
  const fsm = stateMachine(m, 'state', STATES, { reset: 'IDLE', meaning: MEANING });
  const st = fsm.state;
  const rxStopped = m.reg('rx_stopped_r', 1, { reset: 0 });
  const txStopped = m.reg('tx_stopped_r', 1, { reset: 0 });
  const termSent = m.reg('term_sent', 1, { reset: 0 });
  const injPending = m.reg('inject_pending', 1, { reset: 0 });
  const injErrR = m.reg('inject_err_r', 14);
  const abortPending = m.reg('abort_pending', 1, { reset: 0 });
  const lkAddrR = m.reg('lk_address', 64, { doc: 'translated address of the last lookup' });
  const lkFaultR = m.reg('lk_fault', 3);
  const tOpen = m.reg('t_open', 1, { reset: 0, doc: 'a tagged message is open (its last segment had L = 0)' });
  const tOpcode = m.reg('t_opcode', 4);
  const tStag = m.reg('t_stag', 32);
  const tNextTo = m.reg('t_next_to', 64);
  const uOpen = m.reg('u_open', 1, { reset: 0, doc: 'a message is open on QN 0 (only Sends continue)' });
  const uOpcode = m.reg('u_opcode', 4);
  const uMsn = m.reg('u_msn', 32);
  const uPlaced = m.reg('u_placed', 32, { doc: 'octets placed of the open message = next MO' });
  const uBufAddr = m.reg('u_buf_addr', 64);
  const uBufLen = m.reg('u_buf_len', 32);
  const rxMsn = [0, 1, 2, 3].map((i) => m.reg(`rx_msn_${i}`, 32, { doc: `expected MSN of QN ${i}` }));
  const orqRecv = m.reg('orq_received', 32, { reset: 0, doc: 'octets of the ORQ head Read received so far' });
  const orqAtomics = m.reg('orq_atomics', Math.log2(orqDepth) + 1, { reset: 0, doc: 'Atomic Requests in the ORQ' });
  const cplLen = m.reg('cpl_len', 32, { doc: 'message length of the Send being invalidated' });

  // Output registers.
  const cmdValid = m.reg('cmd_valid', 1, { reset: 0 });
  const cmdAddr = m.reg('cmd_addr', 64);
  const cmdDiscard = m.reg('cmd_discard', 1);
  const evtValid = m.reg('evt_valid', 1, { reset: 0 });
  const evtKind = m.reg('evt_kind', 3);
  const evtLength = m.reg('evt_length', 32);
  const evtSolicited = m.reg('evt_solicited', 1);
  const evtInvalidated = m.reg('evt_invalidated', 1);
  const evtStag = m.reg('evt_stag', 32);
  const evtData = m.reg('evt_data', 64);
  const evtErr = m.reg('evt_err', 14);
  const termPending = m.reg('term_pending', 1, { reset: 0, doc: 'the Terminate waits for rdmap_tx_resp' });
  const term = {
    err: m.reg('term_err', 14),
    md: m.reg('term_md', 1, { doc: 'M and D: the segment length and DDP header are copied' }),
    r: m.reg('term_r_r', 1),
    segLen: m.reg('term_seg_len_r', 16),
    tagged: m.reg('term_tagged_r', 1),
    ddpHdr: m.reg('term_ddp_hdr_r', 8 * UNTAGGED_HEADER_SIZE),
    rdmaHdr: m.reg('term_rdma_hdr_r', 224),
  };
  m.assign(cmdValidO, cmdValid);
  m.assign(cmdAddrO, cmdAddr);
  m.assign(cmdDiscardO, cmdDiscard);
  m.assign(evtValidO, evtValid);
  evtPorts.drive(RX_EVENT_FIELDS.pack({ kind: evtKind, length: evtLength, solicited: evtSolicited, invalidated: evtInvalidated, stag: evtStag, data: evtData, err: evtErr }));
  m.assign(rxStoppedO, rxStopped);
  m.assign(txStoppedO, txStopped);

  // ---- Queues -----------------------------------------------------------------------------------
  const inState = fsm.is;
  const rqPop = m.wire('rq_pop', 1, { doc: 'a new message on QN 0 takes the oldest posted buffer' });
  const rqPush = m.wire('rq_push', 1);
  const rq = fifo(m, 'rq', RECV_BUFFER.width, rqDepth, { push: rqPush, data: rcv.value, pop: rqPop });
  m.assign(rqPush, rcvValid.and(rq.full.not()));
  const orqPop = m.wire('orq_pop', 1, { doc: 'the ORQ head completed' });
  const orqPush = m.wire('orq_push', 1);
  const orq = fifo(m, 'orq', ORQ_ENTRY.width, orqDepth, { push: orqPush, data: orqIn.value, pop: orqPop });
  // The requester never has more than ORD Reads and Atomics outstanding (spec/ddp-rdmap.md §7,
  // RFC 5040 §6.1): a request past it waits at s_orq, and with it the work requests behind it. An
  // entry goes in on the handshake only: s_orq_valid does not wait for s_orq_ready.
  // A flip-flop (s_orq_ready, and the ORQ push the read-ahead checks look at): next cycle's count
  // is this one's, one more or one less, compared side by side and picked by the push and the pop.
  const orqRoom = m.reg('orq_room', 1, { reset: 0, doc: 'the ORQ has room and fewer than ORD requests are outstanding' });
  const orqRoomAt = (c: Expr) => c.lt(orqDepth).and(c.zext(16).lt(cfgOrd));
  m.assign(orqPush, orqValid.and(orqRoom));
  const orqCount = orq.count;
  // The ORQ's emptiness as a flip-flop beside its pointers (the read-ahead Atomic Response check
  // and the Read Response checks select on it).
  const orqEmpty = m.reg('orq_empty', 1, { reset: 1, doc: 'the ORQ holds no entry' });
  m.sync(() => m.set(orqEmpty, oneHotMux([[orqPush.and(orqPop.not()), lit(1, 0)], [orqPop.and(orqPush.not()), orqCount.eq(1)]], orqEmpty)));
  m.sync(() =>
    m.set(
      orqRoom,
      oneHotMux(
        [
          [orqPush.and(orqPop.not()), orqRoomAt(orqCount.add(1))],
          [orqPop.and(orqPush.not()), orqRoomAt(orqCount.sub(1))],
        ],
        orqRoomAt(orqCount),
      ),
    ),
  );
  const oh = ORQ_ENTRY.view(orq.head);
  const irrqPush = m.wire('irrq_push', 1);
  const irrqData = m.wire('irrq_data', IRRQ_ATOMIC.width, { doc: 'an IRRQ entry: record irrq_atomic or irrq_read, by its atomic bit' });
  const flush = m.wire('irrq_flush', 1, { doc: 'the transmit side stops: requests not yet answered are dropped' });
  const reqTake = m.let('req_take', reqValid.and(reqReady));
  const irrq = fifo(m, 'irrq', IRRQ_ATOMIC.width, irrqDepth, { push: irrqPush, data: irrqData, pop: reqTake.and(termPending.not()), flush });
  m.assign(irrqCountO, irrq.count);
  const ih = m.let('irrq_head', irrq.head, { doc: 'the oldest IRRQ entry' });
  const iha = IRRQ_ATOMIC.view(ih, { m, prefix: 'irrq_atomic' });
  const ihr = IRRQ_READ.view(ih, { m, prefix: 'irrq_read' });
  // m_req_valid is a flip-flop (rdmap_tx_resp's request decode and segmenter start sit behind it):
  // its next value is term_pending's (cleared when taken, set by term_queued below) or the IRRQ
  // holding an entry after this cycle's push, pop and flush.
  const reqValidR = m.reg('req_valid_r', 1, { reset: 0, doc: 'm_req_valid: term_pending, or the IRRQ is not empty' });
  m.assign(reqValid, reqValidR);
  const irrqPopNow = reqTake.and(termPending.not());
  const irrqAnyNext = m.let(
    'irrq_any_next',
    mux(flush, irrqPush, irrqPush.or(irrq.empty.not().and(irrqPopNow.and(irrq.count.eq(1)).not()))),
    { doc: 'the IRRQ holds an entry next cycle (a flush keeps the push of its cycle)' },
  );
  m.assign(reqKind, mux(termPending, lit(2, RESP_KIND.TERMINATE), mux(iha.atomic, lit(2, RESP_KIND.ATOMIC), lit(2, RESP_KIND.READ_RESPONSE))));
  m.assign(reqRequestId, iha.request_id);
  m.assign(reqSinkStag, ihr.sink_stag);
  m.assign(reqAddr, iha.addr);
  m.assign(reqSrcAddr, ihr.src_addr);
  m.assign(reqAddSwap, iha.add_swap);
  m.assign(reqSinkTo, ihr.sink_to);
  m.assign(reqAddSwapMask, iha.add_swap_mask);
  m.assign(reqCompare, iha.compare);
  m.assign(reqSize, ihr.size);
  m.assign(reqCompareMask, iha.compare_mask);
  m.assign(reqAopcode, iha.aopcode);
  m.assign(reqTermCode, term.err.slice(13, 6));
  m.assign(reqTermEtype, term.err.slice(5, 2));
  m.assign(reqTermLayer, term.err.slice(1, 0).zext(4));
  m.assign(reqTermM, term.md);
  m.assign(reqTermD, term.md);
  m.assign(reqTermR, term.r);
  m.assign(reqTermSegLen, term.segLen);
  m.assign(reqTermTagged, term.tagged);
  m.assign(reqTermDdpHdr, term.ddpHdr);
  m.assign(reqTermRdmaHdr, term.rdmaHdr);

  // ---- Handshakes --------------------------------------------------------------------------------
  const outFree = m.let('out_free', cmdValid.not().and(evtValid.not()), { doc: 'the last ULPDU\'s command and event have left' });
  const startAbort = m.let('start_abort', inState('IDLE').and(abortPending).and(outFree));
  const take = m.let('desc_take', inState('IDLE').and(abortPending.not()).and(outFree).and(inValid));
  // MPA fencing waits for this (rnic_qp): back in IDLE after a descriptor, its decision is made.
  const taken = m.reg('desc_taken', 1, { reset: 0, doc: 'a descriptor has been taken since reset' });
  m.assign(decidedO, taken.and(inState('IDLE')).and(inValid.not()));
  m.assign(dReady, inValid.not());
  m.assign(idleO, inState('IDLE').and(outFree).and(abortPending.not()).and(inValid.not()));
  m.sync(() => {
    m.when(take, () => m.set(inValid, 0));
    m.when(dValid.and(inValid.not()), () => {
      m.set(inValid, 1);
      m.set(inData, dData);
      m.set(inMpaBad, dMpaBad);
      m.set(inMpaCode, dMpaCode);
    });
  });
  m.assign(rcvReady, rq.full.not());
  m.assign(orqReady, orqRoom);

  // ---- CHECK: everything that needs no lookup -----------------------------------------------------
  // Tagged: H8 against the open tagged message.
  const tChecks: [Expr, Expr][] = [
    [readAhead('t_opcode_bad', 1, 'H8: a tagged message is open and the opcode differs from its', (D) => tOpen.and(D.opcode.ne(tOpcode))), eOpcode],
    [readAhead('t_stag_bad', 1, 'a tagged message is open and the STag differs from its', (D) => tOpen.and(D.stag.ne(tStag))), eStag],
    [readAhead('t_to_bad', 1, 'a tagged message is open and TO is not where it goes on', (D) => tOpen.and(D.to.ne(tNextTo))), eBounds],
  ];
  // Untagged: U1, H8 of QN 0 or U2–U4, the fixed-size rule, U5.
  const openNext = (D: typeof incoming) => uOpen.and(qnOfOp(D.opcode).eq(K.QN.SEND));
  const open = readAhead('u_continues', 1, 'this segment continues the open message of QN 0', openNext);
  // The queues as CHECK (and DECIDE) will see them: nothing pops them before DECIDE, so a queue
  // empty when the descriptor is taken holds then what is pushed in that cycle, if anything; one
  // that is not keeps its head. The IRRQ loses an entry when rdmap_tx_resp takes one in that cycle.
  const rqHeadNext = RECV_BUFFER.view(mux(rq.empty, rcv.value, rq.head));
  const bufAddr = readAhead('buf_addr', 64, 'the buffer of the Send: the open message\'s or the oldest posted', (D) => mux(openNext(D), uBufAddr, rqHeadNext.addr));
  const bufLenOf = (D: typeof incoming) => mux(openNext(D), uBufLen, rqHeadNext.len);
  const bufLen = readAhead('buf_len', 32, 'its length', bufLenOf);
  const msgEndOf = (D: typeof incoming) => D.mo.zext(33).add(D.payload_len.zext(33));
  const msgEnd = readAhead('msg_end', 32, 'MO + payload length: the next MO, or the message length', (D) => msgEndOf(D).slice(31, 0));
  const noBuffer = readAhead('no_buffer', 1, 'U2: a new message and no posted buffer for QN 0, no Atomic Request outstanding for QN 2', (D) => {
    const q = qnOfOp(D.opcode);
    const none = q.eq(K.QN.SEND).and(rq.empty.and(rqPush.not())).or(q.eq(K.QN.ATOMIC_RESPONSE).and(orqAtomics.eq(0)).and(orqPush.and(orqIn.ports.atomic).not()));
    return openNext(D).not().and(none);
  });
  const msgEndIn = m.let('msg_end_in', msgEndOf(incoming), { doc: 'MO + payload length of the descriptor in desc_in' });
  const sendTooLong = readAhead('send_too_long', 1, 'a Send past the end of its buffer', (D) =>
    // The three buffers it may be compared side by side, then picked (the picks are not in front
    // of a carry chain): the open message's, the posted head's, the one being posted.
    isSendOp(D.opcode).and(
      oneHotMux([
        [openNext(D), msgEndIn.gt(uBufLen.zext(33))],
        [openNext(D).not().and(rq.empty.not()), msgEndIn.gt(RECV_BUFFER.view(rq.head).len.zext(33))],
        [openNext(D).not().and(rq.empty), msgEndIn.gt(RECV_BUFFER.view(rcv.value).len.zext(33))],
      ]),
    ),
  );
  // The IRRQ's count next cycle when nothing is pushed or flushed in this one (true in IDLE, and in
  // every cycle before POST).
  // Both counts compared, then picked by the pop: rdmap_tx_resp's ready is not in front of a compare.
  const irrqPop = reqTake.and(termPending.not());
  const irrqAtIrdNext = m.let('irrq_ird_ahead', mux(irrqPop, irrq.count.zext(16).gt(cfgIrd), irrq.count.zext(16).ge(cfgIrd)), { doc: 'next cycle, the IRRQ holds IRD requests (A3)' });
  const atomicReqLastOf = (D: typeof incoming) => D.l.and(D.opcode.eq(K.OP.ATOMIC_REQUEST));
  const irdFull = readAhead('irrq_at_ird', 1, 'A3: an Atomic Request and the IRRQ holds IRD requests', (D) => atomicReqLastOf(D).and(irrqAtIrdNext));
  const atomicRespBad = readAhead('atomic_resp_bad', 1, 'the last segment of an Atomic Response that answers no outstanding Atomic Request (ORQ head)', (D) => {
    // The ORQ empty: bad unless this cycle pushes an Atomic with this request ID; else its head.
    const id = fieldOf(D.rdmap, ATOMIC_RESPONSE.request_id);
    const answers = (e: typeof oh) => e.atomic.and(e.request_id.eq(id));
    const bad = oneHotMux([[orqEmpty, orqPush.and(answers(ORQ_ENTRY.view(orqIn.value))).not()], [orqEmpty.not(), answers(oh).not()]]);
    return D.l.and(D.opcode.eq(K.OP.ATOMIC_RESPONSE)).and(bad);
  });
  const qnBad = readAhead('qn_bad', 1, 'U1: QN is not the opcode\'s queue', (D) => D.qn.ne(qnOfOp(D.opcode).zext(32)));
  const msnBad = readAhead('msn_bad', 1, 'U3: a new message and MSN is not the expected MSN of its queue', (D) => {
    const q = qnOfOp(D.opcode);
    // Four compares side by side, then the queue's as an AND-OR: the queue decode is not in front
    // of them (a mux would let yosys share one compare behind a mux of the MSNs).
    const fresh = openNext(D).not();
    return oneHotMux(rxMsn.map((r, i) => [fresh.and(q.eq(i)), D.msn.ne(r)] as const));
  });
  const openOpBad = readAhead('u_opcode_bad', 1, 'H8: the segment continues the open message and the opcode differs from its', (D) => openNext(D).and(D.opcode.ne(uOpcode)));
  const openMsnBad = readAhead('u_msn_bad', 1, 'the segment continues the open message and the MSN differs from its', (D) => openNext(D).and(D.msn.ne(uMsn)));
  const openMoBad = readAhead('u_mo_bad', 1, 'the segment continues the open message and MO is not the octets placed of it', (D) => openNext(D).and(D.mo.ne(uPlaced)));
  const moNonZero = readAhead('mo_nonzero', 1, 'a new message whose MO is not 0 (a new message starts at 0)', (D) => openNext(D).not().and(D.mo.ne(0)));
  const uChecks: [Expr, Expr][] = [
    [qnBad, eQn],
    [openOpBad, eOpcode],
    [openMsnBad, eMsn],
    [openMoBad, eMo],
    [msnBad, eMsn],
    [noBuffer, eNoBuf],
    [moNonZero, eMo],
    [readAhead('not_last_bad', 1, 'L = 0 on a message that is not a Send (fixed-size rule)', (D) => D.l.not().and(isSendOp(D.opcode).not())), eTooLong],
    [sendTooLong, eTooLong],
    // Deliver-time checks that need no lookup: Atomic Request IRD and AOpCode (A3, A4), Atomic
    // Response against the ORQ head.
    [irdFull, eStream],
    [readAhead('aopcode_bad', 1, 'A4: an Atomic Request with an AOpCode other than Fetch-and-Add or Compare-and-Swap', (D) => {
      const a = fieldOf(D.rdmap, ATOMIC_REQUEST.aopcode_word).slice(3, 0);
      return atomicReqLastOf(D).and(a.ne(AOpCode.FETCH_ADD)).and(a.ne(AOpCode.CMP_SWAP));
    }), eOpcode],
    [atomicRespBad, eStream],
  ];
  /**
   * The first failing check's code, as a one-hot AND-OR (a chain of muxes would put the last check
   * behind one level per check). Every code a check gives is non-zero, so "some check fails" is the
   * OR of the conditions, which the state machine reads without waiting for the code.
   */
  // In groups of six: a group's code bits are functions of its six flags (one LUT each), and the
  // groups are picked by "the earlier group fails" (a 2:1 mux), where one priority mux over all
  // twelve untagged checks is a wider OR tree.
  const chain = (checks: readonly [Expr, Expr][]): Expr => // 0 when none fails
    checks.length <= 6 ? priorityMux(checks) : mux(anyOf(checks.slice(0, 6).map(([c]) => c)), priorityMux(checks.slice(0, 6)), chain(checks.slice(6)));
  const zero = new Set(ALL_ERROR_CODES.filter((e) => errBits(e) === 0n).map((e) => K.err(e)));
  const fails = (checks: readonly [Expr, Expr][]) => {
    if (checks.some(([, e]) => zero.has(e))) throw new HdlError('ddp_rx_ctl: a check gives the error word 0, which reads as no error');
    return anyOf(checks.map(([c]) => c));
  };
  // Four exclusive sources, as an AND-OR: the header's error, an injected one, the tagged or the
  // untagged checks.
  const errNz = readAhead('hdr_err_nz', 1, 'the header checks (H1-H7) failed with a non-zero code', (D) => D.err.ne(0));
  const injNz = m.reg('inject_err_nz', 1, { doc: 'inject_err_r is not 0' });
  const fromInj = ok.and(injPending);
  const fromT = ok.and(injPending.not()).and(t);
  const fromU = ok.and(injPending.not()).and(t.not());
  const checkErr = m.let(
    'check_err',
    oneHotMux([[ok.not(), err], [fromInj, injErrR], [fromT, chain(tChecks)], [fromU, chain(uChecks)]]),
    { doc: 'first failing check before any lookup: header (H1-H7), injected, H8/U1-U5 and the no-lookup RDMAP checks' },
  );
  const checkFails = m.let('check_fails', anyOf([ok.not().and(errNz), fromInj.and(injNz), fromT.and(fails(tChecks)), fromU.and(fails(uChecks))]), { doc: 'check_err is not 0' });

  // CHECK registers its verdict; DECIDE (untagged) or POST (tagged, after the lookup) acts on it,
  // so no cycle both runs the checks and acts on their first failure.
  const checkFailed = m.reg('check_failed', 1, { doc: 'check_fails of the ULPDU in progress, registered in CHECK' });
  const checkCode = m.reg('check_code', 14, { doc: 'check_err of the ULPDU in progress, registered in CHECK' });

  // ---- POST: after the lookup ---------------------------------------------------------------------
  /*
   * POST acts on a verdict registered the cycle before, so no cycle both runs the checks and acts on
   * their first failure. POST follows DECIDE (no lookup) or LWAIT (the lookup's answer, read from
   * the port in that cycle), and neither those cycles nor a waiting POST changes the descriptor,
   * CHECK's verdict, orq_received or the ORQ head (nothing pops it before POST). The Read Response
   * checks against the ORQ head (T6/T7) are themselves registered a cycle earlier, from the ORQ as
   * the next cycle sees it; a push into an empty ORQ in the cycle before POST makes POST wait a
   * cycle (post_wait) so that they see its entry.
   */
  const rrTotal = readAhead('rr_total', 33, 'octets of the Read received with this segment', (D) => orqRecv.zext(33).add(D.payload_len.zext(33)));
  const everyCycle = (name: string, width: number, doc: string, value: Expr): Signal => {
    const r = m.reg(name, width, { doc });
    m.sync(() => m.set(r, value));
    return r;
  };
  const rrNoHead = everyCycle('rr_no_head', 1, 'the ORQ head is not a Read (or the ORQ is empty)', orqEmpty.or(oh.atomic));
  const rrStagBad = everyCycle('rr_stag_bad', 1, 'the STag is not the ORQ head Read\'s sink STag', stag.ne(oh.stag));
  const rrToBase = readAhead('rr_to_base', 64, 'TO less the octets of the Read received so far: the Read\'s sink TO if in order', (D) => D.to.sub(orqRecv.zext(64)));
  const rrToBad = everyCycle('rr_to_bad', 1, 'TO is not where the ORQ head Read goes on', rrToBase.ne(oh.to));
  const rrLenBad = everyCycle('rr_len_bad', 1, 'past the ORQ head Read\'s size, or short of it at the last segment', rrTotal.gt(oh.size.zext(33)).or(last.and(rrTotal.ne(oh.size.zext(33)))));
  const orqFirst = everyCycle('orq_first', 1, 'an entry entered the empty ORQ in the last cycle', orqEmpty.and(orqPush));
  const postWait = m.let('post_wait', orqFirst.or(everyCycle('orq_first_d', 1, 'and in the cycle before', orqFirst)), {
    doc: 'the ORQ head is newer than the Read Response verdict: wait for it',
  });
  const readSizeNz = readAhead('read_size_nz', 1, 'the Read Request reads octets (else no lookup, spec §5.4)', (D) => fieldOf(D.rdmap, READ_REQUEST.size).ne(0));
  // What each check applies to, decoded with the descriptor (a register each, not a decode in
  // front of the verdict).
  const isRROf = (D: typeof incoming) => D.t.and(D.opcode.eq(K.OP.READ_RESPONSE));
  const taggedLen = readAhead('tagged_len', 1, 'a tagged ULPDU with data (its STag is looked up)', (D) => D.t.and(D.payload_len.ne(0)));
  const rrAny = readAhead('rr_any', 1, 'a Read Response', isRROf);
  const rrLen = readAhead('rr_len', 1, 'a Read Response with data', (D) => isRROf(D).and(D.payload_len.ne(0)));
  const rrLast = readAhead('rr_last', 1, 'the last segment of a Read Response', (D) => isRROf(D).and(D.l));
  const readLen = readAhead('read_len', 1, 'a Read Request that reads octets (its source STag is looked up)', (D) => D.t.not().and(D.opcode.eq(K.OP.READ_REQUEST)).and(fieldOf(D.rdmap, READ_REQUEST.size).ne(0)));
  // What the STag lookup and POST are for: a tagged ULPDU (t), a Read Request, an Atomic Request.
  const readReq = readAhead('read_req', 1, 'a Read Request', (D) => D.t.not().and(D.opcode.eq(K.OP.READ_REQUEST)));
  const atomicReq = readAhead('atomic_req', 1, 'an Atomic Request', (D) => D.t.not().and(D.opcode.eq(K.OP.ATOMIC_REQUEST)));
  // The lookup's verdict, registered with its answer in LWAIT (cleared with the descriptor).
  const lkFailed = m.reg('lk_failed', 1, { doc: 'the lookup of the ULPDU in POST failed (T1-T5, Read source, Atomic target and alignment)' });
  // No lookup yet: no fault, address 0 (a zero-length Read's source address).
  ahead.push([lkFailed, lit(1, 0)], [lkFaultR, lit(3, 0)], [lkAddrR, lit(64, 0)]);
  const lkFailedNow = taggedLen.or(readLen).or(atomicReq).and(lkFault.ne(0)).or(atomicReq.and(lkAddr.slice(2, 0).ne(0)));
  const lkV = verdictOf(mux(lkFaultR.eq(0), eStream, mux(taggedLen, faultTable(ddpTagged, lkFaultR), faultTable(rdmapProt, lkFaultR))));
  // T6/T7 of a Read Response, from their flags (registered a cycle ahead): registered once more.
  const rrChecks: [Expr, Expr][] = [
    [rrAny.and(rrNoHead), eDdpLocal],
    [rrLen.and(rrStagBad), eStag],
    [rrLen.and(rrToBad), eBounds],
    [rrAny.and(rrLenBad), eBounds],
  ];
  if ([...rrChecks.map(([, e]) => e), eStream].some((e) => zero.has(e))) throw new HdlError('ddp_rx_ctl: a check gives the error word 0, which reads as no error');
  const rrFailed = everyCycle('rr_failed', 1, 'a Read Response check against the ORQ head fails', anyOf(rrChecks.map(([c]) => c)));
  const rrVerdict = everyCycle('rr_verdict', 16, 'its first failure: {r, md, code}', priorityMux(rrChecks.map(([c, e]) => [c, packVerdict(verdictOf(e))] as const)));
  // IRD (A3 for a Read Request) from a flag registered a cycle ahead, exact: nothing pushes or
  // flushes the IRRQ in the cycle before POST or while POST waits.
  const irdReached = everyCycle('irrq_at_ird_post', 1, 'this cycle, the IRRQ holds IRD requests', irrqAtIrdNext);
  const irdFails = readReq.and(irdReached);
  // A tagged ULPDU's own checks (CHECK's verdict) come first; a Read or Atomic Request reaches POST
  // only with a clean one. The lookup's failure comes before the checks against the ORQ head and IRD.
  const postAll: [Expr, Verdict][] = [
    [checkFailed, verdictOf(checkCode)],
    [lkFailed, lkV],
    [rrFailed, unpackVerdict(rrVerdict)],
    [irdFails, verdictOf(eStream)],
  ];
  const postErr = unpackVerdict(m.let('post_verdict', priorityMux(postAll.map(([c, v]) => [c, packVerdict(v)] as const)), { doc: 'first failing check of the ULPDU in POST: {r, md, code}' }));
  const postOk = m.let('post_ok', anyOf(postAll.map(([c]) => c)).not(), { doc: 'every check of the ULPDU in POST passes' });
  const postGo = m.let('post_go', inState('POST').and(postWait.not()), { doc: 'POST acts (its verdict is current)' });
  const needRoom = t.not(); // a Read or Atomic Request
  // A Read or Atomic Request is answered from memory that every earlier Write and Send has reached
  // (RFC 5040 §5.5 rule 6): it enters the IRRQ only when the placements before it have landed.
  const placed = cmdValid.not().and(placeIdle);
  // IRRQ full as of the last cycle: only POST pushes (as it leaves), so the IRRQ is at most that
  // full now; a pop in the last cycle costs one more cycle of waiting.
  const irrqWasFull = everyCycle('irrq_was_full', 1, 'the IRRQ was full in the last cycle', irrq.full);
  const postStall = m.let('post_stall', postOk.and(needRoom).and(irrqWasFull.or(placed.not())), {
    doc: 'wait: the IRRQ has no room (IRD above its depth), or earlier placements are still being written',
  });

  // ---- The Terminate and its header copies (spec/ddp-rdmap.md §2.4, §8) -----------------------------
  const ddpHdrOctets = [F.ctrl0, F.rsvd_ulp, ...[24, 16, 8, 0].map((s) => stag.slice(s + 7, s))];
  const tail = (x: Expr, n: number) => Array.from({ length: n }, (_, i) => x.slice(8 * (n - 1 - i) + 7, 8 * (n - 1 - i)));
  const taggedHdr = [...ddpHdrOctets, ...tail(to, 8)];
  const untaggedHdr = [...ddpHdrOctets, ...tail(qn, 4), ...tail(msn, 4), ...tail(mo, 4)];
  const packLe = (octets: Expr[], n: number) => cat(...[...octets, ...Array.from({ length: n - octets.length }, () => lit(8, 0))].reverse());
  const hdrCopy = m.let('hdr_copy', mux(t, packLe(taggedHdr, UNTAGGED_HEADER_SIZE), packLe(untaggedHdr, UNTAGGED_HEADER_SIZE)), { doc: 'the DDP header as received' });
  const rdmaCopy = F.rdmap.slice(224 - 1, 0);

  /** The first error of this ULPDU (or an abort, withUlpdu = false): stop, answer once (model `fail`). */
  /**
   * The first error (model `fail`/`llpError`/`abort`): stop, answer once. `from`: a check on the
   * ULPDU in progress (header copies as the spec's table says), MPA's verdict on it (no copies; a
   * lost connection closes without a Terminate), or a local abort (no ULPDU at all).
   */
  const fail = (from: 'ulpdu' | 'llp' | 'abort') => {
    m.set(rxStopped, 1);
    m.set(txStopped, 1);
    // Its payload waits in ddp_rx_place: drop it (after IWAIT it has already been placed).
    if (from !== 'abort') m.when(hasPayload.and(fsm.is('IWAIT').not()), () => {
      m.set(cmdValid, 1);
      m.set(cmdDiscard, 1);
    });
    const closes = from === 'ulpdu' ? isTermOp : from === 'llp' ? mpaClosed : lit(1, 0);
    // The event (closed, or Terminate sent): its fields are written below (m_evt fields).
    m.when(closes, () => m.set(evtValid, 1));
    m.when(closes.not().and(termSent.not()), () => {
      m.set(termSent, 1);
      // term_pending (and m_req_valid) are set from term_queued below, the same condition flat.
      m.set(evtValid, 1);
      // The Terminate's fields are written below (m_req_term fields).
    });
  };

  const llpErr = cat(mpaCode, lit(4, 0), lit(2, 2));
  const invErr = mux(invFault.eq(STAG_INV_FAULTS.indexOf('not-invalidatable')), eOpInv, eProtInv);
  /** An event's fields (m_evt fields below); evt_valid is set where the event is decided. */
  const evtFields = (kind: Expr, length: Expr, extra: { solicited?: Expr; stag?: Expr; data?: Expr; invalidated?: boolean } = {}) => {
    m.set(evtKind, kind);
    m.set(evtLength, length);
    m.set(evtSolicited, extra.solicited ?? lit(1, 0));
    m.set(evtInvalidated, extra.invalidated ? 1 : 0);
    m.set(evtStag, extra.stag ?? lit(32, 0));
    m.set(evtData, extra.data ?? lit(64, 0));
    m.set(evtErr, 0);
  };
  const place = (addr: Expr) => {
    m.set(cmdValid, 1);
    m.set(cmdAddr, addr);
    m.set(cmdDiscard, 0);
  };

  // Untagged acceptance in DECIDE (no error): the queue state and delivery.
  const clean = m.let('check_clean', mpaBad.not().and(checkFailed.not()), { doc: 'MPA passed the FPDU and every check before a lookup passed' });
  const termLast = readAhead('term_last', 1, 'the last segment of a Terminate', (D) => D.l.and(D.opcode.eq(K.OP.TERMINATE)));
  const atomicRespLast = readAhead('atomic_resp_last', 1, 'the last segment of an Atomic Response', (D) => D.l.and(D.opcode.eq(K.OP.ATOMIC_RESPONSE)));
  const decideNow = inState('DECIDE').and(rxStopped.not());
  const uAccept = m.let('u_accept', decideNow.and(clean).and(t.not()));
  // DECIDE fails a failed FPDU and an untagged ULPDU; a tagged one fails in POST.
  const decideFail = m.let('decide_fail', decideNow.and(mpaBad.or(t.not().and(checkFailed))), { doc: 'DECIDE answers the first error' });
  // Where fail() queues the Terminate (its `closes` false, no Terminate sent yet), as one flat
  // AND-OR over the states that fail: term_pending and the registered m_req_valid take it directly
  // instead of through the state machine's if/else chain.
  const termQueued = m.let(
    'term_queued',
    termSent.not().and(
      anyOf([
        startAbort.and(txStopped.not()),
        decideNow.and(mpaBad).and(mpaClosed.not()),
        decideNow.and(mpaBad.not()).and(t.not()).and(checkFailed).and(isTermOp.not()),
        postGo.and(postOk.not()).and(isTermOp.not()),
        inState('IWAIT').and(invRspValid).and(invFault.ne(0)).and(isTermOp.not()),
      ]),
    ),
    { doc: 'the first error queues its Terminate this cycle' },
  );
  m.assign(
    flush,
    anyOf([
      decideFail,
      uAccept.and(termLast),
      postGo.and(postOk.not()),
      // The one invalidate in flight is IWAIT's (INV issues it, IWAIT waits for it): its
      // response needs no state check (one survived the mutation campaign as dead logic).
      invRspValid.and(invFault.ne(0)),
      startAbort.and(termSent.not()).and(txStopped.not()),
    ]),
  );
  m.assign(rqPop, uAccept.and(open.not()).and(qnOf.eq(K.QN.SEND)));
  m.assign(orqPop, uAccept.and(atomicRespLast).or(postGo.and(postOk).and(rrLast)));
  const readSize = R(READ_REQUEST.size);
  m.assign(
    irrqPush,
    postGo.and(postOk).and(postStall.not()).and(needRoom),
  );
  m.assign(
    irrqData,
    mux(
      atomicReq,
      IRRQ_ATOMIC.pack({
        request_id: R(ATOMIC_REQUEST.request_id),
        addr: lkAddrR,
        add_swap: R(ATOMIC_REQUEST.add_swap),
        add_swap_mask: R(ATOMIC_REQUEST.add_swap_mask),
        compare: R(ATOMIC_REQUEST.compare),
        compare_mask: R(ATOMIC_REQUEST.compare_mask),
        aopcode,
        atomic: 1,
      }),
      IRRQ_READ.pack({
        sink_stag: R(READ_REQUEST.sink_stag),
        src_addr: mux(readSize.ne(0), lkAddrR, lit(64, 0)),
        sink_to: R(READ_REQUEST.sink_to),
        reserved0: 0,
        size: readSize,
        reserved1: 0,
        atomic: 0,
      }),
    ),
  );

  m.sync(() => {
    m.when(take, () => m.set(taken, 1));
    m.when(rst, () => rxMsn.forEach((r) => m.set(r, cfgMsn)));
    m.when(cmdReady, () => m.set(cmdValid, 0));
    m.when(evtReady, () => m.set(evtValid, 0));
    m.when(injValid, () => {
      m.set(injPending, 1);
      m.set(injErrR, injErr);
      m.set(injNz, injErr.ne(0));
    });
    m.when(abortIn, () => m.set(abortPending, 1));
    const termPendingNext = termQueued.or(termPending.and(reqTake.not()));
    m.set(termPending, termPendingNext);
    m.set(reqValidR, termPendingNext.or(irrqAnyNext));
    m.when(orqPush.and(orqIn.ports.atomic), () => m.set(orqAtomics, orqAtomics.add(1)));
    m.when(orqPop.and(oh.atomic), () => m.set(orqAtomics, mux(orqPush.and(orqIn.ports.atomic), orqAtomics, orqAtomics.sub(1))));

    m.switch(st, [
      [
        fsm.value('IDLE'),
        () => {
          m.when(startAbort, () => {
            m.set(abortPending, 0);
            // RFC 5040 §7.1 rule 1: an error not tied to an incoming message; no headers.
            m.when(termSent.not().and(txStopped.not()), () => fail('abort'));
          });
          m.when(take, () => {
            m.set(d, inData);
            for (const [r, v] of ahead) m.set(r, v);
            m.set(mpaBad, inMpaBad);
            m.set(mpaCode, inMpaCode);
            m.set(mpaClosed, inMpaCode.eq(LlpError.TCP_CLOSED.code));
            fsm.goto('CHECK');
          });
        },
      ],
      [
        fsm.value('CHECK'),
        () => {
          fsm.goto('IDLE');
          m.when(rxStopped, () => {
            // §5.6: every segment after an error is silently dropped.
            m.when(hasPayload, () => {
              m.set(cmdValid, 1);
              m.set(cmdDiscard, 1);
            });
          });
          m.when(rxStopped.not(), () => {
            m.when(mpaBad.not().and(ok).and(injPending), () => m.set(injPending, 0));
            m.set(checkFailed, checkFails);
            m.set(checkCode, checkErr);
            fsm.goto('DECIDE');
            // A tagged ULPDU looks its STag up whatever its checks say; POST reports the first
            // failure, its own checks before the lookup's (the lookup changes nothing).
            // Without data there is nothing to look up (the STag is not checked).
            m.when(mpaBad.not().and(t).and(hasLen), () => fsm.goto('LOOK'));
          });
        },
      ],
      [
        fsm.value('DECIDE'),
        () => {
          fsm.goto('IDLE');
          m.when(rxStopped.not(), () => {
            // MPA failed the FPDU: the ULPDU was never delivered (spec/mpa.md §6), only the error is.
            m.when(mpaBad, () => fail('llp'));
            m.when(mpaBad.not().and(t.not()).and(checkFailed), () => fail('ulpdu'));
            // A tagged ULPDU without data: POST (its verdict registered in this cycle).
            m.when(mpaBad.not().and(t), () => fsm.goto('POST'));
            m.when(uAccept, () => {
              m.when(isSend.and(hasPayload), () => place(bufAddr.add(mo.zext(64))));
              m.when(last.not(), () => {
                m.set(uOpen, 1);
                m.set(uOpcode, op);
                m.set(uMsn, msn);
                m.set(uPlaced, msgEnd);
                m.set(uBufAddr, bufAddr);
                m.set(uBufLen, bufLen);
              });
              m.when(last, () => {
                m.when(qnOf.eq(K.QN.SEND), () => m.set(uOpen, 0));
                rxMsn.forEach((r, i) => m.when(qnOf.eq(i), () => m.set(r, msn.add(1))));
                m.switch(op, [
                  [[K.OP.SEND, K.OP.SEND_SE], () => m.set(evtValid, 1)],
                  [
                    [K.OP.SEND_INVALIDATE, K.OP.SEND_SE_INVALIDATE],
                    () => {
                      m.set(cplLen, msgEnd);
                      fsm.goto('INV');
                    },
                  ],
                  [[K.OP.IMMEDIATE, K.OP.IMMEDIATE_SE], () => m.set(evtValid, 1)],
                  [
                    K.OP.READ_REQUEST,
                    () => {
                      // Zero-length Read: Source STag and TO are not validated (spec §5.4).
                      m.set(st, mux(readSizeNz, fsm.value('LOOK'), fsm.value('POST')));
                    },
                  ],
                  [
                    K.OP.ATOMIC_REQUEST,
                    () => {
                      fsm.goto('LOOK');
                    },
                  ],
                  [
                    K.OP.ATOMIC_RESPONSE,
                    () => m.set(evtValid, 1),
                  ],
                  [
                    K.OP.TERMINATE,
                    () => {
                      // A peer MAY stop after a Terminate; this one does (flushes the IRRQ).
                      m.set(evtValid, 1);
                      m.set(rxStopped, 1);
                      m.set(txStopped, 1);
                    },
                  ],
                ]);
              });
            });
          });
        },
      ],
      [fsm.value('LOOK'), () => m.when(lkReady, () => fsm.goto('LWAIT'))],
      [
        fsm.value('LWAIT'),
        () => {
          m.when(lkRspValid, () => {
            m.set(lkFaultR, lkFault);
            m.set(lkAddrR, lkAddr);
            m.set(lkFailed, lkFailedNow);
            fsm.goto('POST');
          });
        },
      ],
      [
        fsm.value('POST'),
        () => {
          m.when(postGo.and(postOk.not()), () => {
            fail('ulpdu');
            fsm.goto('IDLE');
          });
          m.when(postGo.and(postOk).and(postStall.not()), () => {
            fsm.goto('IDLE');
            m.when(t, () => {
              m.when(hasLen, () => place(lkAddrR));
              m.set(tOpen, last.not());
              m.set(tOpcode, op);
              m.set(tStag, stag);
              m.set(tNextTo, to.add(plen.zext(64)));
              m.when(rrAny, () => {
                m.set(orqRecv, mux(last, lit(32, 0), rrTotal.slice(31, 0)));
                m.when(last, () => m.set(evtValid, 1));
              });
            });
          });
        },
      ],
      [fsm.value('INV'), () => m.when(invReady, () => fsm.goto('IWAIT'))],
      [
        fsm.value('IWAIT'),
        () => {
          m.when(invRspValid, () => {
            fsm.goto('IDLE');
            m.when(invFault.eq(0), () => m.set(evtValid, 1));
            m.when(invFault.ne(0), () => fail('ulpdu'));
          });
        },
      ],
    ]);
  });

  // ---- m_evt fields -----------------------------------------------------------------------------
  // m_evt is free in every state but IDLE (a descriptor is taken, and an abort starts, only when it
  // is), so its fields are written in each state from the state and a few registered bits; only
  // evt_valid (above) waits for the whole decision. A Terminate sent or a closure sets kind and err.
  const failFields = (e: Expr, closes: Expr) => {
    m.set(evtKind, mux(closes, K.EVT.CLOSED, K.EVT.TERMINATE_SENT));
    m.set(evtErr, e);
  };
  const solicited = isOp(K.OP.SEND_SE, K.OP.SEND_SE_INVALIDATE, K.OP.IMMEDIATE_SE);
  m.sync(() => {
    fsm.cases({
      IDLE: () => m.when(startAbort, () => failFields(eLocal, lit(1, 0))),
      DECIDE: () =>
        m.when(mpaBad, () => failFields(llpErr, mpaClosed), () =>
          m.when(t.not().and(checkFailed), () => failFields(checkCode, isTermOp), () =>
            m.switch(op, [
              [[K.OP.SEND, K.OP.SEND_SE], () => evtFields(K.EVT.RECV, msgEnd, { solicited })],
              [[K.OP.IMMEDIATE, K.OP.IMMEDIATE_SE], () => evtFields(K.EVT.RECV_IMMEDIATE, lit(32, 8), { solicited, data: R(IMMEDIATE_DATA.data) })],
              [K.OP.ATOMIC_RESPONSE, () => evtFields(K.EVT.ATOMIC, lit(32, 8), { data: R(ATOMIC_RESPONSE.value) })],
              [
                K.OP.TERMINATE,
                () => {
                  evtFields(K.EVT.TERMINATE_RECEIVED, lit(32, 0));
                  m.set(evtErr, ERROR_WORD.pack({ layer: R(TERMINATE.layer_etype).slice(5, 4), etype: R(TERMINATE.layer_etype).slice(3, 0), code: R(TERMINATE.code) }));
                },
              ],
            ]),
          ),
        ),
      POST: () => m.when(postOk, () => evtFields(K.EVT.READ, oh.size), () => failFields(postErr.code, isTermOp)),
      IWAIT: () =>
        m.when(invFault.eq(0), () => evtFields(K.EVT.RECV, cplLen, { solicited: op.eq(K.OP.SEND_SE_INVALIDATE), stag, invalidated: true }), () => failFields(invErr, isTermOp)),
    });
  });

  // ---- m_req_term fields ------------------------------------------------------------------------
  // Until the one Terminate is queued (term_sent) they are free, so each state that can fail
  // writes its error's Terminate every cycle; term_sent and term_pending wait for the decision.
  const termFields = (v: Verdict, withUlpdu: boolean) => {
    const withHeaders = withUlpdu ? v.md.and(h1.not()) : lit(1, 0);
    m.set(term.err, v.code);
    m.set(term.md, withHeaders);
    m.set(term.r, withHeaders.and(v.r).and(op.eq(K.OP.READ_REQUEST)));
    m.set(term.segLen, mux(withHeaders, ulpduLen, lit(16, 0)));
    m.set(term.tagged, t);
    m.set(term.ddpHdr, hdrCopy);
    m.set(term.rdmaHdr, rdmaCopy);
  };
  m.sync(() =>
    m.when(termSent.not(), () =>
      fsm.cases({
        // RFC 5040 §7.1 rule 1: an abort is not tied to an incoming message; no headers.
        IDLE: () => termFields(verdictOf(eLocal), false),
        DECIDE: () => m.when(mpaBad, () => termFields(verdictOf(llpErr), false), () => termFields(verdictOf(checkCode), true)),
        POST: () => termFields(postErr, true),
        IWAIT: () => termFields(verdictOf(invErr), true),
      }),
    ),
  );

  // ---- Lookup and invalidate requests (issued in LOOK / INV) --------------------------------------
  const lkIsTagged = t;
  const lkIsRead = readReq;
  m.assign(lkValid, inState('LOOK'));
  m.assign(lkStag, mux(lkIsTagged, stag, mux(lkIsRead, R(READ_REQUEST.src_stag), R(ATOMIC_REQUEST.stag))));
  m.assign(lkTo, mux(lkIsTagged, to, mux(lkIsRead, R(READ_REQUEST.src_to), R(ATOMIC_REQUEST.to))));
  m.assign(lkLen, mux(lkIsTagged, plen, mux(lkIsRead, readSize, lit(32, 8))));
  m.assign(
    lkRight,
    mux(lkIsTagged, mux(op.eq(K.OP.WRITE), lit(5, right('remote-write')), lit(5, right('local-write'))), mux(lkIsRead, lit(5, right('remote-read')), lit(5, right('remote-atomic')))),
  );
  m.assign(invValid, inState('INV'));
  m.assign(invStag, stag);
  m.assign(lkPd, cfgPd);
  m.assign(invPd, cfgPd);
  return m.build();
}
