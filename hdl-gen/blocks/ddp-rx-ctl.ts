import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { ALL_ERROR_CODES, DdpError, LlpError, RdmapError, type ErrorCode } from '../../ts-model/terminate-codes';
import { Expr, cat, lit, mux } from '../core/expr';
import type { Signal } from '../core/signal';
import { HdlError } from '../core/location';
import { ModuleBuilder, type Module } from '../core/module';
import { ATOMIC_REQUEST, ATOMIC_RESPONSE, IMMEDIATE_DATA, READ_REQUEST, TERMINATE, type WireField } from '../../ts-model/wire/layouts';
import { enumConstants, portGroup } from '../lib/ports';
import { DDP_RX_DESC, ERROR_WORD, errBits, IRRQ_ATOMIC, IRRQ_READ, ORQ_ENTRY, QP_RX_CFG, RECV_BUFFER, RX_EVENT_FIELDS } from './records';
import { bramFifo } from '../lib/fifo-bram';
import { anyOf, oneHotMux, priorityMux } from '../lib/onehot';
import { indexBits, ram } from '../lib/ram';
import { contextMemory } from '../lib/context';
import { record } from '../lib/record';
import { rnicNames } from './names';
import { stateMachine } from '../lib/fsm';
import { IRRQ_GEN_BITS, RESP_BODY_BITS, RESP_REQ_KIND, TERMINATE_REQ, irrqShared, qpRings, respReq } from './ddp-rx-ctl-queues';
import { STAG_FAULTS, STAG_INV_FAULTS, STAG_RIGHT_BITS } from './stag-table';
import { DDP_RX_PLACE_COMMANDS } from './ddp-rx-place';

/**
 * The receive path's placement control for N QPs (spec/ddp-rdmap.md §5.2–§5.6, §6.3, §7, §8):
 * every QP's DDP/RDMAP state and every check after the header checks, in the model's order
 * (ts-model/rnic/endpoint.ts `receive`, `receiveTagged`, `receiveUntagged`, `deliver`, `fail`),
 * one ULPDU at a time whatever its QP.
 *
 * It takes one descriptor of ddp_rx_hdr per ULPDU (s_desc, with its QP on s_desc_qp) and decides:
 * - where the ULPDU's payload goes: one m_cmd per descriptor with has_payload (the payload waits in
 *   ddp_rx_place's FIFO), an address or discard; commands leave in descriptor order;
 * - the tagged checks H8 and T1–T7 (T1–T5 through the STag table's lookup port, T6/T7 against the
 *   ORQ head), the untagged checks U1–U5 (MSN per QN, posted receive buffers, the open message of
 *   QN 0), and the RDMAP checks after delivery (Read Request source, IRD, Atomic target and
 *   alignment, Send with Invalidate through the STag table's invalidate port, Atomic Response
 *   against the ORQ head);
 * - the responses: Read and Atomic Requests enter the IRRQ (m_req, read by rdmap_tx_resp); on the
 *   first error the Terminate with its header copies (spec/ddp-rdmap.md §2.4, §8);
 * - the events (m_evt, with m_evt_qp): receive completions, requester completions (Read,
 *   Atomic), Terminate sent, Terminate received, stream closed; each offered only once every
 *   placement issued before it is written (place_done: the completion hold below, RFC 5041
 *   §5.3-5.4), two cycles after the last write's handshake at the earliest.
 * MPA's verdict on the FPDU (s_desc_mpa_bad/code) comes before every check: a failed FPDU was
 * never delivered, so only the LLP error is reported (model `llpError`). After a QP's first error
 * everything later of that QP is dropped (its payload discarded) and its IRRQ is flushed: exactly
 * one Terminate per stream (§5.6, §8 rule 5).
 *
 * Per-QP state (the Corundum queue-manager shape: one record per QP in block RAM, one engine):
 * - qp_ctx: a record per QP (ddp_rx_ctx: its configuration, stream state, expected MSNs, the open
 *   messages, the heads of its receive queue and ORQ, its IRRQ pushes), in block RAM. The engine
 *   works on one QP's record in registers (cur_*); a ULPDU or operation of another QP first writes
 *   it back and takes the other's, read from the RAM when that ULPDU or operation entered the
 *   input register (in_*): a context switch costs one cycle (LOAD), the same QP back to back none.
 *   Nothing else writes qp_ctx, so the record read ahead is current (hazard rule: only the engine
 *   writes, and it writes a record back only when it switches away from it).
 * - Posted receive buffers and the ORQ: a ring per QP in one RAM each (rqDepth, orqDepth entries);
 *   each QP's oldest entry is also kept in its record, so the checks read it from registers; a
 *   pop refills it from the ring in the next cycle, and the engine takes nothing in that cycle.
 * - The IRRQ: one queue for every QP, in arrival order (ddp-rx-ctl-queues.ts irrqShared), with
 *   each request's QP, MSN, MULPDU and byte order, so rdmap_tx_resp keeps no per-QP state. A QP's
 *   flush (its first error) or restart advances its generation; its older requests are dropped
 *   as they reach the head. A QP's requests in the IRRQ are its pushes less those the head took
 *   (a count read a cycle late: an IRD or irrqDepth check may see one more, never one less).
 * - Operations on a QP enter the same input register ahead of descriptors (first cfg, abort,
 *   inject, ORQ push, receive buffer): cfg (a new connection: the record restarts from the
 *   configuration, its IRRQ generation advances), a posted receive buffer (dropped if its ring is
 *   full: the host keeps at most rqDepth posted per QP; err_recv_full goes high), an ORQ entry
 *   (taken only while the QP has fewer than cfg_ord outstanding and room, else refused: m_orq_ack
 *   says which, a cycle after; m_orq_done says one was answered), a local fault (inject, abort).
 *   After rst an init sweep (one QP a cycle, N cycles) gives every QP a stopped record, so a QP
 *   that was never configured drops what it receives; cfg_ready and s_desc_tready are low meanwhile.
 *
 * The implementation fixes the model's defaults (ts-model/rnic/options.ts): Immediate Data lands
 * in the event only, the Terminate's DDP Segment Length is the whole segment, atomics share IRD
 * with Reads, no draft-00 Swap. A request leaves its QP's count when the IRRQ's head takes it, as
 * the model's answerRequests does; a QP has at most irrqDepth requests in the IRRQ, so an IRD above
 * that makes the control wait for room instead of failing.
 *
 * MPA fencing (RFC 6581 §3): a QP configured with cfg_fence is the responder; its first ULPDU
 * (good or failed) opens the fence: m_first (with m_first_qp) says so once, a cycle after that
 * ULPDU is decided (a Terminate it raised is in the IRRQ by then). A Terminate the QP raises before
 * (an abort) waits in its record and enters the IRRQ when the first ULPDU arrives.
 *
 * Timing: every input enters a register first (the input register, the operation FIFOs), so
 * s_desc_tready and the operation readies are flip-flops or ORs of them. CHECK registers the verdict
 * of the checks that need no lookup; DECIDE acts on it for an untagged ULPDU, POST for a tagged one
 * (after its lookup, which CHECK starts whatever the verdict), so no cycle both checks and acts. A
 * Write takes 6 cycles (IDLE, CHECK, LOOK, three cycles of STag lookup latency, POST), an untagged
 * Send 3 (IDLE, CHECK, DECIDE; one more when it takes a new receive buffer), a tagged ULPDU without
 * data 4, a Read or Atomic Request 7; a switch to another QP one more. LOOK and INV wait for the
 * table's ready. A Read or Atomic Request waits in POST until every placement before it has been
 * written (place_idle) and its QP had room in the IRRQ in the cycle before, so that its response
 * reads what earlier Writes and Sends placed (RFC 5040 §5.5 rule 6).
 *
 * Status of one QP (stat_qp in, stat_* two cycles later): its rx and tx stopped, its requests in
 * the IRRQ, whether its fence holds, whether MPA failed one of its FPDUs.
 */
export { RX_EVENT } from './names';

export interface DdpRxCtlOptions {
  /** QPs (contexts); default 1. */
  readonly qps?: number;
  /** Inbound Read/Atomic Requests a QP may have in the IRRQ. */
  readonly irrqDepth?: number;
  /** Outstanding outbound Reads/Atomics of a QP (its ORQ ring). */
  readonly orqDepth?: number;
  /** Posted receive buffers of QN 0 per QP (its receive ring). */
  readonly rqDepth?: number;
}

/** Requests the IRRQ holds for all QPs together (a block RAM FIFO). */
export const IRRQ_SHARED_DEPTH = 64;

export const ddpRxCtlName = (qps: number): string => `ddp_rx_ctl_q${qps}`;

/** Cycles after rst before cfg_ready: the init sweep gives each QP a stopped record. */
export const ddpRxCtlInitCycles = (qps: number): number => Math.max(qps, 2);

/** The per-ULPDU state machine: checks, the STag lookup and its wait, posting, an invalidation and its wait. */
const STATES = ['IDLE', 'CHECK', 'DECIDE', 'LOOK', 'LWAIT', 'POST', 'INV', 'IWAIT'] as const;
const MEANING = {
  IDLE: 'waiting for a ULPDU descriptor or an operation (a context switch takes a cycle here)',
  CHECK: 'the RFC 5040/5041 checks of the descriptor (their verdict registered)',
  DECIDE: 'acting on the verdict: an untagged ULPDU, or a failed FPDU',
  LOOK: 'STag lookup offered (until the table takes it)',
  LWAIT: 'waiting for the STag lookup',
  POST: 'posting the placement command and the event',
  INV: 'invalidation of an STag offered (until the table takes it)',
  IWAIT: 'waiting for the invalidation',
} as const;

/** What the input register holds besides a descriptor: an operation on a QP's record. */
const OP_KIND = Object.freeze({ DESC: 0, CFG: 1, ABORT: 2, INJECT: 3, ORQ: 4, RECV: 5 });

const right = (r: (typeof STAG_RIGHT_BITS)[number]): number => 1 << STAG_RIGHT_BITS.indexOf(r);
const faultCode = (f: (typeof STAG_FAULTS)[number]): number => STAG_FAULTS.indexOf(f);

export function ddpRxCtlModule(opts: DdpRxCtlOptions = {}): Module {
  const N = opts.qps ?? 1;
  if (!Number.isInteger(N) || N < 1) throw new RangeError(`ddp_rx_ctl serves 1 or more QPs, got ${N}`);
  const irrqDepth = opts.irrqDepth ?? 8;
  const orqDepth = opts.orqDepth ?? 8;
  const rqDepth = opts.rqDepth ?? 16;
  const NC = Math.max(N, 2);
  const qb = indexBits(NC);
  const m = new ModuleBuilder(
    ddpRxCtlName(N),
    `DDP/RDMAP receive control of ${N} QP${N > 1 ? 's' : ''} (RFC 5040, RFC 5041 section 7.1, RFC 7306; spec/ddp-rdmap.md\n` +
      'sections 5-8): tagged checks H8 and T1-T7 through the STag table, untagged checks U1-U5 with MSN per QN\n' +
      'and posted receive buffers, RDMAP checks after delivery, placement commands, the IRRQ of Read and\n' +
      'Atomic Requests, completion events (each once the placements before it are written, RFC 5041 section 5.4),\n' +
      'and exactly one Terminate per stream on its first error (then drop all).\n' +
      'Each QP\'s state in a context record in block RAM, one ULPDU at a time.',
    { qps: N, irrqDepth, orqDepth, rqDepth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const cg = 'QP context load (cfg): a new connection on QP cfg_qp';
  const cfgValid = m.input('cfg_valid', 1, { group: cg });
  const cfgReady = m.output('cfg_ready', 1, { group: cg, doc: 'low through the init sweep after rst, and while the last one waits' });
  const cfgQp = m.input('cfg_qp', qb, { group: cg });
  const cfgIn = portGroup(m, 'cfg', QP_RX_CFG, 'input', cg);
  const cfgDoneO = m.output('m_cfg_done', 1, { group: cg, doc: 'a pulse: the last cfg taken is in its QP\'s record (what reads the record sees the new connection)' });

  const dg = 'Descriptor input from ddp_rx_hdr (s_desc)';
  const dData = m.input('s_desc_tdata', DDP_RX_DESC.width, { group: dg, record: DDP_RX_DESC });
  const dValid = m.input('s_desc_tvalid', 1, { group: dg });
  const dReady = m.output('s_desc_tready', 1, { group: dg });
  const dQp = m.input('s_desc_qp', qb, { group: dg, doc: 'the QP of the ULPDU' });
  const dMpaBad = m.input('s_desc_mpa_bad', 1, { group: dg, doc: "MPA's verdict on this ULPDU's FPDU: it failed (mpa_rx m_axis_tuser = 0)" });
  const dMpaCode = m.input('s_desc_mpa_code', 8, { group: dg, doc: 'its LLP error code (Terminate 0x2/0x0/code), with s_desc_mpa_bad' });

  const rg = 'Posted receive buffers of QN 0 (s_recv; to the QP s_recv_qp)';
  const rcvValid = m.input('s_recv_valid', 1, { group: rg });
  const rcvReady = m.output('s_recv_ready', 1, { group: rg });
  const rcvQp = m.input('s_recv_qp', qb, { group: rg });
  const rcv = portGroup(m, 's_recv', RECV_BUFFER, 'input', rg);

  const og = 'ORQ: outbound Read and Atomic Requests of QP s_orq_qp, in the order they were sent (s_orq)';
  const orqValid = m.input('s_orq_valid', 1, { group: og });
  const orqReady = m.output('s_orq_ready', 1, { group: og });
  const orqQp = m.input('s_orq_qp', qb, { group: og });
  const orqIn = portGroup(m, 's_orq', ORQ_ENTRY, 'input', og);

  const fg = 'Local faults of one QP (valid with ready)';
  const injValid = m.input('inject_valid', 1, { group: fg, doc: 'the next ULPDU of QP inject_qp that passes the header checks meets this local failure' });
  const injReady = m.output('inject_ready', 1, { group: fg });
  const injQp = m.input('inject_qp', qb, { group: fg });
  const injErr = m.input('inject_err', 14, { group: fg, doc: '{code, etype, layer}' });
  const abortValid = m.input('abort_valid', 1, { group: fg, doc: 'the ULP tears QP abort_qp down: Terminate RDMAP local catastrophic, no headers' });
  const abortReady = m.output('abort_ready', 1, { group: fg });
  const abortQp = m.input('abort_qp', qb, { group: fg });

  const lg = 'STag table lookup (taken with lk_ready; answered 2 cycles later)';
  const lkValid = m.output('lk_valid', 1, { group: lg });
  const lkReady = m.input('lk_ready', 1, { group: lg, doc: 'the table takes the lookup' });
  const lkStag = m.output('lk_stag', 32, { group: lg });
  const lkTo = m.output('lk_to', 64, { group: lg });
  const lkLen = m.output('lk_len', 32, { group: lg });
  const lkRight = m.output('lk_right', 5, { group: lg });
  const lkPd = m.output('lk_pd', 16, { group: lg, doc: "the receiving QP's protection domain (T2)" });
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

  const pg = 'Placement commands to ddp_rx_place (m_cmd): one per descriptor with has_payload, in descriptor order';
  const cmdValidO = m.output('m_cmd_valid', 1, { group: pg });
  const cmdReady = m.input('m_cmd_ready', 1, { group: pg });
  const cmdAddrO = m.output('m_cmd_addr', 64, { group: pg });
  const cmdDiscardO = m.output('m_cmd_discard', 1, { group: pg });
  const placeIdle = m.input('place_idle', 1, { group: pg, doc: 'every command accepted so far has been written (ddp_rx_place idle)' });
  const placeDone = m.input('place_done', 1, { group: pg, doc: 'a pulse: the last write of a command that placed its packet is accepted (ddp_rx_place done; in command order)' });

  const REQ = respReq(qb);
  const qg = 'Responses to rdmap_tx_resp (m_req): the IRRQ head, a Read or Atomic Request or a Terminate, of QP m_req_qp';
  const reqValid = m.output('m_req_valid', 1, { group: qg });
  const reqReady = m.input('m_req_ready', 1, { group: qg });
  const q = (name: string, width: number, doc?: string) => m.output(`m_req_${name}`, width, { group: qg, ...(doc ? { doc } : {}) });
  const reqKind = q('kind', 2, '0 Read Response, 1 Atomic, 2 Terminate');
  const reqQp = q('qp', qb, 'the QP the response is for');
  const reqMsn = q('msn', 32, 'Atomic Response: its MSN of QN 3; Terminate: its MSN of QN 2');
  const reqMulpdu = q('mulpdu', 16, "the QP's MULPDU");
  const reqBigEndian = q('big_endian', 1, "the QP's atomic targets are big-endian");
  const reqSinkStag = q('sink_stag', 32, 'Read: Data Sink STag');
  const reqSinkTo = q('sink_to', 64, 'Read: Data Sink TO');
  const reqSrcAddr = q('src_addr', 64, 'Read: translated source address (0 for a zero-length Read)');
  const reqSize = q('size', 32, 'Read: RDMA Read Message Size');
  const reqAopcode = q('aopcode', 4, 'Atomic: AOpCode');
  const reqAddr = q('addr', 64, 'Atomic: translated, 8-octet aligned target');
  const reqAddSwap = q('add_swap', 64, 'Atomic: Add Data / Swap Data');
  const reqAddSwapMask = q('add_swap_mask', 64, 'Atomic: Add Mask / Swap Mask');
  const reqCompare = q('compare', 64, 'Atomic: Compare Data');
  const reqCompareMask = q('compare_mask', 64, 'Atomic: Compare Mask');
  const reqRequestId = q('request_id', 32, 'Atomic: Request Identifier');
  const reqTerm = portGroup(m, 'm_req_term', TERMINATE_REQ, 'output', qg);

  const eg = 'Events (m_evt): completions, Terminates, closure, of QP m_evt_qp';
  const evtValidO = m.output('m_evt_valid', 1, { group: eg });
  const evtReady = m.input('m_evt_ready', 1, { group: eg });
  const evtQpO = m.output('m_evt_qp', qb, { group: eg });
  const evtPorts = portGroup(m, 'm_evt', RX_EVENT_FIELDS, 'output', eg);

  const xg = 'Per-QP notices';
  const firstValidO = m.output('m_first_valid', 1, { group: xg, doc: 'the first ULPDU of fenced QP m_first_qp is decided: it may send (RFC 6581 section 3)' });
  const firstReady = m.input('m_first_ready', 1, { group: xg });
  const firstQpO = m.output('m_first_qp', qb, { group: xg });
  const orqDoneO = m.output('m_orq_done', 1, { group: xg, doc: 'a pulse: an ORQ entry is answered (its Read Response or Atomic Response complete): room for one more' });
  const orqAckO = m.output('m_orq_ack', 1, { group: og, doc: 'a pulse: the last s_orq entry taken is decided' });
  const orqAckOkO = m.output('m_orq_ack_ok', 1, { group: og, doc: 'with m_orq_ack: it entered the ORQ (its QP had fewer than ORD outstanding and room); else it was refused' });
  const stoppedO = m.output('m_stopped', 1, { group: xg, doc: 'a pulse: QP m_stopped_qp stops (a Terminate queued or received, or the connection lost): it sends nothing more' });
  const stoppedQpO = m.output('m_stopped_qp', qb, { group: xg });

  const sg = 'Status';
  const statQp = m.input('stat_qp', qb, { group: sg, doc: 'the QP whose status stat_* give two cycles later' });
  const statRxStopped = m.output('stat_rx_stopped', 1, { group: sg, doc: 'it takes no more ULPDUs (a Terminate or an LLP error)' });
  const statTxStopped = m.output('stat_tx_stopped', 1, { group: sg, doc: 'it sends nothing more (its Terminate is queued)' });
  const ib = Math.log2(irrqDepth) + 1;
  const statIrrq = m.output('stat_irrq_used', ib, { group: sg, doc: 'its inbound Read/Atomic Requests not yet taken by the IRRQ head' });
  const statFenced = m.output('stat_fenced', 1, { group: sg, doc: "its transmit waits for the peer's first FPDU (MPA fencing)" });
  const statMpaErr = m.output('stat_mpa_err', 1, { group: sg, doc: 'MPA failed one of its FPDUs' });
  const chkQp = m.input('chk_qp', qb, { group: sg, doc: 'a second lookup, for the transmit side: the QP whose chk_tx_stopped is given two cycles later' });
  const chkTxStopped = m.output('chk_tx_stopped', 1, { group: sg, doc: 'QP chk_qp (two cycles ago) sends nothing more' });
  const idleO = m.output('idle', 1, { group: sg, doc: 'no ULPDU or operation in progress or waiting, no command or event waiting' });
  const irrqIdleO = m.output('irrq_idle', 1, { group: sg, doc: 'the IRRQ holds no request of any QP' });
  const recvFullO = m.output('err_recv_full', 1, { group: sg, doc: "sticky: a receive buffer was posted to a QP whose ring was full (dropped)" });

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

  // ---- Each QP's record (qp_ctx) and the registers that hold the current QP's ---------------------
  const rb = Math.log2(rqDepth);
  const ob = Math.log2(orqDepth);
  if (!Number.isInteger(rb) || rb < 1 || !Number.isInteger(ob) || ob < 1 || !Number.isInteger(ib - 1) || ib < 2) {
    throw new RangeError(`ddp_rx_ctl: rqDepth, orqDepth and irrqDepth must be powers of two >= 2, got ${rqDepth}, ${orqDepth}, ${irrqDepth}`);
  }
  const CTX_FIELDS = {
    cfg: QP_RX_CFG,
    rx_stopped: { width: 1, doc: 'takes no more ULPDUs' },
    tx_stopped: { width: 1, doc: 'sends nothing more' },
    term_sent: { width: 1, doc: 'its one Terminate is queued (or held by the fence)' },
    arrived: { width: 1, doc: 'a ULPDU of the connection has arrived (MPA fencing opens)' },
    term_held: { width: 1, doc: "an abort's Terminate waits for the fence to open" },
    mpa_err: { width: 1, doc: 'MPA failed one of its FPDUs' },
    inj_pending: { width: 1, doc: 'a local failure waits for the next ULPDU that passes the header checks' },
    inj_err: 14,
    inj_nz: { width: 1, doc: 'inj_err is not 0' },
    t_open: { width: 1, doc: 'a tagged message is open (its last segment had L = 0)' },
    t_opcode: 4,
    t_stag: 32,
    t_next_to: 64,
    u_open: { width: 1, doc: 'a message is open on QN 0 (only Sends continue)' },
    u_opcode: 4,
    u_msn: 32,
    u_placed: { width: 32, doc: 'octets placed of the open message = next MO' },
    u_buf_addr: 64,
    u_buf_len: 32,
    rx_msn_0: { width: 32, doc: 'expected MSN of QN 0' },
    rx_msn_1: { width: 32, doc: 'of QN 1' },
    rx_msn_2: { width: 32, doc: 'of QN 2' },
    rx_msn_3: { width: 32, doc: 'of QN 3' },
    orq_recv: { width: 32, doc: 'octets of the ORQ head Read received so far' },
    orq_atomics: { width: ob + 1, doc: 'Atomic Requests in the ORQ' },
    atomic_msn: { width: 32, doc: 'MSN of its next Atomic Response (QN 3)' },
    gen: { width: IRRQ_GEN_BITS, doc: 'its IRRQ generation (advanced by a flush or a restart)' },
    pushed: { width: ib, doc: 'requests it pushed into the IRRQ (mod 2^bits)' },
    rq_head: { width: rb, doc: 'its receive ring: the oldest slot' },
    rq_count: { width: rb + 1, doc: 'buffers posted' },
    rq_buf: { width: RECV_BUFFER.width, doc: 'the oldest posted buffer (rq_count > 0)' },
    orq_head: { width: ob, doc: 'its ORQ ring: the oldest slot' },
    orq_count: { width: ob + 1, doc: 'entries' },
    orq_entry: { width: ORQ_ENTRY.width, doc: 'the ORQ head (orq_count > 0)' },
  } as const;
  const CTX = record('ddp_rx_ctx', CTX_FIELDS);
  type CtxField = keyof typeof CTX_FIELDS;
  // The current QP's record, a register per field (named as the fields); cur_qp names the QP.
  const cur = Object.fromEntries(CTX.fields.map((f) => [f.name, m.reg(`cur_${f.name}`, f.width, { doc: f.doc ?? `${f.name} of cur_qp`, ...(f.layout && { record: f.layout }) })])) as Record<CtxField, Signal>;
  const curQp = m.reg('cur_qp', qb, { doc: 'the QP whose record is in cur_*' });
  const curValid = m.reg('cur_valid', 1, { reset: 0, doc: 'cur_* hold the record of cur_qp (else every record is in qp_ctx)' });
  const curValue = m.let('cur_record', CTX.pack(cur), { doc: 'cur_* as a record, for the write-back' });
  const cfgNow = QP_RX_CFG.view(cur.cfg, { m, prefix: 'cur_cfg' });
  const cfgPd = cfgNow.pd;
  const cfgIrd = cfgNow.ird;
  const rxStopped = cur.rx_stopped;
  const txStopped = cur.tx_stopped;
  const termSent = cur.term_sent;
  const injPending = cur.inj_pending;
  const injErrR = cur.inj_err;
  const injNz = cur.inj_nz;
  const tOpen = cur.t_open;
  const tOpcode = cur.t_opcode;
  const tStag = cur.t_stag;
  const tNextTo = cur.t_next_to;
  const uOpen = cur.u_open;
  const uOpcode = cur.u_opcode;
  const uMsn = cur.u_msn;
  const uPlaced = cur.u_placed;
  const uBufAddr = cur.u_buf_addr;
  const uBufLen = cur.u_buf_len;
  const rxMsn = [cur.rx_msn_0, cur.rx_msn_1, cur.rx_msn_2, cur.rx_msn_3];
  const orqRecv = cur.orq_recv;
  const orqAtomics = cur.orq_atomics;
  const ctx = ram(m, 'qp_ctx', { width: CTX.width, depth: NC, latency: 1, doc: 'every QP\'s record (ddp_rx_ctx)' });

  // The init sweep after rst: every QP's record stopped (a QP never configured drops what it gets).
  const init = m.reg('init', 1, { reset: 1, doc: `after rst: every QP's record written stopped, one a cycle (${NC} cycles)` });
  const initIdx = m.reg('init_idx', qb, { reset: 0 });
  const stoppedRecord = CTX.update(CTX.zero(), { rx_stopped: 1, tx_stopped: 1, term_sent: 1 });
  m.sync(() =>
    m.when(init, () => {
      m.set(initIdx, initIdx.add(1));
      m.when(initIdx.eq(lit(qb, NC - 1)), () => m.set(init, 0));
    }),
  );

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

  // ---- Input: operations and descriptors into one register, the QP's record read ahead -------------
  // Each operation port enters a small FIFO (its ready: not full), so what the input register
  // picks from is registered; operations go ahead of descriptors, cfg first. The record of the QP
  // the input register takes is read from qp_ctx in the same cycle, so it is there for the switch.
  /** An operation's fields, from bit 0 (as wide as the widest, an ORQ entry). */
  const argBits = Math.max(QP_RX_CFG.width, RECV_BUFFER.width, ORQ_ENTRY.width, 14);
  const OPK = enumConstants(m, 'OPK', 3, OP_KIND, (k) => `input register: ${k === 'DESC' ? 'a ULPDU descriptor' : `operation ${k}`}`);
  const sources = [
    { name: 'cfg', valid: cfgValid, ready: cfgReady, qp: cfgQp, kind: OPK.CFG, arg: cfgIn.value },
    { name: 'abort', valid: abortValid, ready: abortReady, qp: abortQp, kind: OPK.ABORT, arg: lit(1, 0) },
    { name: 'inject', valid: injValid, ready: injReady, qp: injQp, kind: OPK.INJECT, arg: injErr },
    { name: 'orq', valid: orqValid, ready: orqReady, qp: orqQp, kind: OPK.ORQ, arg: orqIn.value },
    { name: 'recv', valid: rcvValid, ready: rcvReady, qp: rcvQp, kind: OPK.RECV, arg: rcv.value },
  ];
  const inValid = m.reg('in_valid', 1, { reset: 0, doc: 'a descriptor or an operation waits in in_* for IDLE' });
  const inQp = m.reg('in_qp', qb, { doc: 'its QP' });
  const inKind = m.reg('in_kind', 3, { doc: 'what it is (OPK_*)' });
  const inArg = m.reg('in_arg', argBits, { doc: "an operation's fields (ddp_rx_op.arg)" });
  const inData = m.reg('desc_in', DDP_RX_DESC.width, { doc: 'a descriptor, as s_desc_tdata gave it', record: DDP_RX_DESC });
  const inMpaBad = m.reg('desc_in_mpa_bad', 1, { doc: 's_desc_mpa_bad with it' });
  const inMpaCode = m.reg('desc_in_mpa_code', 8, { doc: 's_desc_mpa_code with it' });
  const inSame = m.reg('in_same', 1, { doc: 'in_qp is cur_qp and cur_* hold its record: no switch' });
  const inLoad = m.wire('in_load', 1, { doc: 'the input register takes an operation or a descriptor' });
  // Each FIFO holds its own fields and QP only; the kind is the FIFO's. Its head and head-valid
  // are registers (fifo-bram.ts), so the pick below starts from flip-flops.
  const heads = sources.map((x) => {
    const pop = m.wire(`${x.name}_op_pop`, 1);
    const f = bramFifo(m, `${x.name}_op`, qb + x.arg.width, 2, { push: x.valid.and(x.ready), data: cat(x.arg, x.qp), pop });
    m.assign(x.ready, f.full.not().and(init.not()));
    const arg = f.head.slice(qb + x.arg.width - 1, qb);
    return { pop, valid: f.headValid, f, head: { qp: f.head.slice(qb - 1, 0), kind: x.kind, arg: arg.width === argBits ? arg : arg.zext(argBits) } };
  });
  // The first operation FIFO with a head, else the descriptor.
  const picks = heads.map((h, i) => (i === 0 ? h.valid : h.valid.and(anyOf(heads.slice(0, i).map((g) => g.valid)).not())));
  const anyOp = anyOf(heads.map((h) => h.valid));
  m.assign(inLoad, inValid.not().and(init.not()).and(anyOp.or(dValid)));
  m.assign(dReady, inValid.not().and(init.not()).and(anyOp.not()));
  heads.forEach((h, i) => m.assign(h.pop, inLoad.and(picks[i]!)));
  const nextQp = m.let('in_next_qp', oneHotMux(heads.map((h, i) => [picks[i]!, h.head.qp] as const), dQp), { doc: 'the QP the input register takes' });
  const nextKind = m.let('in_next_kind', oneHotMux(heads.map((h, i) => [picks[i]!, h.head.kind] as const), OPK.DESC));
  const nextArg = m.let('in_next_arg', oneHotMux(heads.map((h, i) => [picks[i]!, h.head.arg] as const)));
  ctx.read(nextQp, inLoad);
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
  const inState = fsm.is;
  const lkAddrR = m.reg('lk_address', 64, { doc: 'translated address of the last lookup' });
  const lkFaultR = m.reg('lk_fault', 3);
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
  const firstValid = m.reg('first_valid', 1, { reset: 0, doc: 'm_first_valid' });
  const firstQp = m.reg('first_qp', qb);
  const firstDue = m.reg('first_due', 1, { reset: 0, doc: 'the ULPDU in progress is the first of a fenced QP: m_first when it is decided' });
  const orqDone = m.reg('orq_done', 1, { reset: 0 });
  const orqAck = m.reg('orq_ack', 1, { reset: 0 });
  const cfgDone = m.reg('cfg_done', 1, { reset: 0 });
  const orqAckOk = m.reg('orq_ack_ok', 1);
  const stopped = m.reg('stopped', 1, { reset: 0 });
  const stoppedQp = m.reg('stopped_qp', qb);
  const recvFull = m.reg('recv_full', 1, { reset: 0, doc: 'err_recv_full' });
  const termPush = m.reg('term_push', 1, { reset: 0, doc: 'the Terminate of cur_qp waits to enter the IRRQ' });
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
  m.assign(firstValidO, firstValid);
  m.assign(firstQpO, firstQp);
  m.assign(orqDoneO, orqDone);
  m.assign(orqAckO, orqAck);
  m.assign(cfgDoneO, cfgDone);
  m.assign(orqAckOkO, orqAckOk);
  m.assign(stoppedO, stopped);
  m.assign(stoppedQpO, stoppedQp);
  m.assign(recvFullO, recvFull);

  // ---- Completion hold: an event leaves once the data before it is written ------------------------
  /*
   * A message is delivered, its completion raised, only when all its segments and every earlier
   * message are placed (RFC 5041 §5.3-5.4, spec/ddp-rdmap.md §6.1; RFC 5040 §5.5 rule 4: a Send
   * fences the Writes before it). The host may read the buffer as soon as it sees the completion,
   * so the event decided with a ULPDU (evt_*) does not go to m_evt at once: it moves into the hold
   * stage (hold_*) with the count of placing commands still to be written before it, those
   * ddp_rx_place has taken and not finished (place_owed) and the message's own if it is still in
   * cmd_*. ddp_rx_place finishes its commands in order, one place_done pulse each (registered here,
   * so it reaches no logic of this block through ddp_rx_place's write handshake), and each counts
   * one off; m_evt offers the event at zero. The engine waits for evt_* to move, as it waited for
   * m_evt before, so it checks the next ULPDU while ddp_rx_place writes this one's data. Every event
   * waits, Terminates and closure too: none overtakes what was placed before it.
   */
  // place_owed is at most ddp_rx_place's commands and the one whose place_done_r is not counted
  // yet; hold_wait at most ddp_rx_place's commands and cmd_*'s.
  const countBits = indexBits(DDP_RX_PLACE_COMMANDS + 2);
  const placeDoneR = m.reg('place_done_r', 1, { reset: 0, doc: 'place_done a cycle ago: a placing command has finished' });
  const owed = m.reg('place_owed', countBits, { reset: 0, doc: 'placing commands ddp_rx_place has taken and not finished (as of place_done_r)' });
  const holdValid = m.reg('hold_valid', 1, { reset: 0, doc: 'an event waits in the hold stage' });
  const holdWait = m.reg('hold_wait', countBits, { doc: 'placing commands still to finish before it: m_evt offers it at 0' });
  const holdQp = m.reg('hold_qp', qb, { doc: 'its QP (cur_qp when it was decided)' });
  const holdEvent = m.reg('hold_event', RX_EVENT_FIELDS.width, { doc: 'its record (rx_event)', record: RX_EVENT_FIELDS });
  const holdOut = m.let('hold_out', holdValid.and(holdWait.eq(0)), { doc: 'the held event has its data written: m_evt_valid' });
  const holdFree = m.let('hold_free', holdValid.not().or(holdOut.and(evtReady)), { doc: 'the hold stage takes an event this cycle' });
  const evtMove = m.let('evt_move', evtValid.and(holdFree), { doc: 'the decided event moves into the hold stage' });
  const cmdOwn = m.let('cmd_placing', cmdValid.and(cmdDiscard.not()), { doc: 'cmd_* holds a placing command not yet taken' });
  m.assign(evtValidO, holdOut);
  m.assign(evtQpO, holdQp);
  evtPorts.drive(holdEvent);
  m.sync(() => {
    m.set(placeDoneR, placeDone);
    m.set(owed, owed.add(cmdOwn.and(cmdReady).zext(owed.width)).sub(placeDoneR.zext(owed.width)));
    m.when(holdOut.and(evtReady), () => m.set(holdValid, 0));
    m.when(holdWait.ne(0).and(placeDoneR), () => m.set(holdWait, holdWait.sub(1)));
    m.when(evtMove, () => {
      m.set(holdValid, 1);
      // A command finishing now was owed already (taken at least two cycles ago), never cmd_*'s.
      m.set(holdWait, owed.zext(holdWait.width).add(cmdOwn.zext(holdWait.width)).sub(placeDoneR.zext(holdWait.width)));
      m.set(holdQp, curQp);
      m.set(holdEvent, RX_EVENT_FIELDS.pack({ kind: evtKind, length: evtLength, solicited: evtSolicited, invalidated: evtInvalidated, stag: evtStag, data: evtData, err: evtErr }));
    });
  });

  // ---- Queues -----------------------------------------------------------------------------------
  const rqPop = m.wire('rq_pop', 1, { doc: 'a new message on QN 0 takes the oldest posted buffer' });
  const orqPop = m.wire('orq_pop', 1, { doc: 'the ORQ head completed' });
  const rqRing = qpRings(m, 'rq_ring', { qps: N, depth: rqDepth, width: RECV_BUFFER.width, doc: "each QP's posted receive buffers" });
  const orqRing = qpRings(m, 'orq_ring', { qps: N, depth: orqDepth, width: ORQ_ENTRY.width, doc: "each QP's ORQ" });
  const rqEmpty = m.let('rq_empty', cur.rq_count.eq(0), { doc: 'no buffer posted for cur_qp' });
  const orqEmpty = m.let('orq_empty', cur.orq_count.eq(0), { doc: "cur_qp's ORQ holds no entry" });
  const oh = ORQ_ENTRY.view(cur.orq_entry, { m, prefix: 'orq_head' });
  // A pop refills the head kept in the record from the ring in the next cycle (the engine waits).
  rqRing.ram.read(rqRing.at(curQp, cur.rq_head.add(1)), rqPop);
  orqRing.ram.read(orqRing.at(curQp, cur.orq_head.add(1)), orqPop);
  const rqRefill = m.reg('rq_refill', 1, { reset: 0, doc: 'rq_ring_rd_data holds the next oldest buffer for cur_rq_buf' });
  const orqRefill = m.reg('orq_refill', 1, { reset: 0, doc: 'orq_ring_rd_data holds the next ORQ entry for cur_orq_entry' });
  const refill = m.reg('refill', 1, { reset: 0, doc: 'rq_refill or orq_refill' });
  m.sync(() => {
    m.set(rqRefill, rqPop);
    m.set(orqRefill, orqPop);
    m.set(refill, rqPop.or(orqPop));
  });

  // The IRRQ of every QP, and its head stage (ddp-rx-ctl-queues.ts).
  const irrqPush = m.wire('irrq_push', 1, { doc: 'a Read or Atomic Request enters the IRRQ' });
  const irrqData = m.wire('irrq_data', IRRQ_ATOMIC.width, { doc: 'its entry: record irrq_atomic or irrq_read, by its atomic bit' });
  const flush = m.wire('irrq_flush', 1, { doc: "cur_qp's transmit side stops: its requests not yet taken are dropped" });
  const cfgTake = m.wire('cfg_take', 1, { doc: 'cfg restarts cur_qp' });
  const genNext = m.let('gen_next', cur.gen.add(1), { doc: "cur_qp's next IRRQ generation (a flush or a restart)" });
  // A flush advances the generation, and a push counts, in the cycle after (the engine holds
  // cur_qp meanwhile): the decision behind them is not in front of the record's registers.
  const flushed = m.reg('flushed', 1, { reset: 0, doc: 'cur_qp was flushed last cycle: its generation advances now' });
  const pushed = m.reg('pushed', 1, { reset: 0, doc: 'a request of cur_qp entered the IRRQ last cycle: its count advances now' });
  const pushedAtomic = m.reg('pushed_atomic', 1, { doc: 'that request is an Atomic Request: its MSN of QN 3 advances too' });
  const reqTake = m.let('req_take', reqValid.and(reqReady));
  const termPushNow = m.wire('term_push_now', 1, { doc: 'the Terminate enters the IRRQ' });
  const irrqEntry = m.wire('irrq_entry', REQ.width, { doc: 'what enters the IRRQ (resp_req)', record: REQ });
  const irrq = irrqShared(m, {
    qps: N,
    depth: IRRQ_SHARED_DEPTH,
    countBits: ib,
    push: irrqPush.or(termPushNow),
    data: irrqEntry,
    take: reqTake,
    init: { active: init, index: initIdx },
    gen: { enable: flushed.or(cfgTake), index: curQp, value: genNext },
  });
  m.assign(termPushNow, termPush.and(irrq.full.not()));
  m.assign(irrqIdleO, irrq.idle);
  // cur_qp's requests in the IRRQ: its pushes less those the head took (read a cycle late, so one
  // may still count: a check waits or fails at most one request early, never late). In IDLE it
  // reads the QP of the input register, the one the next take serves.
  const takenIdx = m.let('irrq_taken_qp', mux(inState('IDLE').and(inValid), inQp, curQp), { doc: 'the QP whose taken count is read' });
  const irrqUsed = m.let('irrq_used', cur.pushed.sub(irrq.taken('irrq_taken_ctl', takenIdx, lit(1, 1))), { doc: "cur_qp's requests in the IRRQ" });
  const rqv = REQ.view(irrq.value, { m, prefix: 'irrq_req' });
  m.assign(reqValid, irrq.valid);
  m.assign(reqKind, rqv.kind);
  m.assign(reqQp, rqv.qp);
  m.assign(reqMsn, rqv.msn);
  m.assign(reqMulpdu, rqv.mulpdu);
  m.assign(reqBigEndian, rqv.big_endian);
  const iha = IRRQ_ATOMIC.view(rqv.body.slice(IRRQ_ATOMIC.width - 1, 0), { m, prefix: 'irrq_atomic' });
  const ihr = IRRQ_READ.view(rqv.body.slice(IRRQ_READ.width - 1, 0), { m, prefix: 'irrq_read' });
  m.allowUnused(irrq.value, 'gen was checked at the head (a stale request never reaches m_req); a Read uses no reserved bits');
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
  reqTerm.drive(rqv.body.slice(TERMINATE_REQ.width - 1, 0));

  // ---- Handshakes --------------------------------------------------------------------------------
  const outFree = m.let('out_free', cmdValid.not().and(evtValid.not()).and(firstValid.not()), { doc: "the last ULPDU's command and events have left" });
  const engineFree = m.let('engine_free', inState('IDLE').and(outFree).and(termPush.not()).and(refill.not()).and(firstDue.not()).and(flushed.or(pushed).not()), {
    doc: 'IDLE may switch records or take the input register (nothing of the last ULPDU is still to be written)',
  });
  const switching = m.let('ctx_switch', engineFree.and(inValid).and(inSame.not()), { doc: "write cur_qp's record back, take in_qp's (read ahead)" });
  const takeAny = m.let('in_take', engineFree.and(inValid).and(inSame), { doc: 'IDLE takes the descriptor or operation' });
  const take = m.let('desc_take', takeAny.and(inKind.eq(OPK.DESC)));
  const opIs = (k: Expr) => takeAny.and(inKind.eq(k));
  const startAbort = m.let('start_abort', opIs(OPK.ABORT));
  m.assign(cfgTake, opIs(OPK.CFG));
  const recvTake = m.let('recv_take', opIs(OPK.RECV));
  const orqTake = m.let('orq_take', opIs(OPK.ORQ));
  const injTake = m.let('inject_take', opIs(OPK.INJECT));
  m.assign(idleO, inValid.not().and(anyOf(heads.map((h) => h.f.empty.not())).not()).and(init.not()).and(engineFree).and(holdValid.not()));
  m.sync(() => {
    m.when(takeAny, () => m.set(inValid, 0));
    m.when(inLoad, () => {
      m.set(inValid, 1);
      m.set(inQp, nextQp);
      m.set(inSame, curValid.and(nextQp.eq(curQp)));
      m.set(inKind, nextKind);
      m.set(inArg, nextArg);
      m.when(anyOp.not(), () => {
        m.set(inData, dData);
        m.set(inMpaBad, dMpaBad);
        m.set(inMpaCode, dMpaCode);
      });
    });
    m.when(switching, () => m.set(inSame, 1));
  });
  // The write-back of a switch (and the init sweep): only the engine writes qp_ctx.
  ctx.write(init.or(switching.and(curValid)), mux(init, initIdx, curQp), mux(init, stoppedRecord, curValue));

  // The status of one QP: a small record per QP written with each write-back, cur_* for cur_qp.
  const STAT = record('ddp_rx_stat', { rx_stopped: 1, tx_stopped: 1, fenced: 1, mpa_err: 1, pushed: ib });
  const statOf = (c: { readonly [K in 'rx_stopped' | 'tx_stopped' | 'arrived' | 'mpa_err' | 'pushed']: Expr }, fence: Expr) =>
    STAT.pack({ rx_stopped: c.rx_stopped, tx_stopped: c.tx_stopped, fenced: fence.and(c.arrived.not()), mpa_err: c.mpa_err, pushed: c.pushed });
  // A context memory: a read in the cycle of a write-back of the same QP sees it (forwarded).
  const statRam = contextMemory(m, 'qp_stat', { width: STAT.width, depth: NC, latency: 1, doc: "each QP's status as of its last write-back" });
  statRam.update(init.or(switching.and(curValid)), mux(init, initIdx, curQp), mux(init, STAT.update(STAT.zero(), { rx_stopped: 1, tx_stopped: 1 }), statOf(cur, cfgNow.fence)));
  statRam.lookup(statQp, lit(1, 1));
  const statTaken = irrq.taken('irrq_taken_stat', statQp, lit(1, 1));
  const statQpD = m.reg('stat_qp_d', qb, { doc: 'stat_qp a cycle ago: the QP of qp_stat_rd_data' });
  const statHit = m.let('stat_cur', curValid.and(statQpD.eq(curQp)), { doc: 'the QP asked for is cur_qp: its live record' });
  const sv = STAT.view(m.let('stat_record', mux(statHit, statOf(cur, cfgNow.fence), statRam.value)));
  const statRegs = { rx: m.reg('stat_rx_stopped_r', 1), tx: m.reg('stat_tx_stopped_r', 1), irrq: m.reg('stat_irrq_used_r', ib), fenced: m.reg('stat_fenced_r', 1), mpa: m.reg('stat_mpa_err_r', 1) };
  m.sync(() => {
    m.set(statQpD, statQp);
    m.set(statRegs.rx, sv.rx_stopped);
    m.set(statRegs.tx, sv.tx_stopped);
    m.set(statRegs.irrq, sv.pushed.sub(statTaken));
    m.set(statRegs.fenced, sv.fenced);
    m.set(statRegs.mpa, sv.mpa_err);
  });
  // The transmit side's lookup: a QP's tx_stopped (a copy of that field of qp_stat), cur_qp's live.
  const chkRam = contextMemory(m, 'qp_tx_stopped', { width: 1, depth: NC, latency: 1, doc: "each QP's tx_stopped as of its last write-back (a copy for chk_qp)" });
  chkRam.update(init.or(switching.and(curValid)), mux(init, initIdx, curQp), mux(init, lit(1, 1), cur.tx_stopped));
  chkRam.lookup(chkQp, lit(1, 1));
  const chkQpD = m.reg('chk_qp_d', qb, { doc: 'chk_qp a cycle ago: the QP of qp_tx_stopped_rd_data' });
  const chkR = m.reg('chk_tx_stopped_r', 1);
  m.sync(() => {
    m.set(chkQpD, chkQp);
    m.set(chkR, mux(curValid.and(chkQpD.eq(curQp)), cur.tx_stopped, chkRam.value));
  });
  m.assign(chkTxStopped, chkR);
  m.assign(statRxStopped, statRegs.rx);
  m.assign(statTxStopped, statRegs.tx);
  m.assign(statIrrq, statRegs.irrq);
  m.assign(statFenced, statRegs.fenced);
  m.assign(statMpaErr, statRegs.mpa);

  // MPA fencing (RFC 6581 §3): cur_qp is fenced and no ULPDU of its connection has arrived.
  const fenceHolds = m.let('fence_holds', cfgNow.fence.and(cur.arrived.not()), { doc: "cur_qp's fence holds" });

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
  // The queues as CHECK (and DECIDE) will see them: only the engine changes them, and not before
  // DECIDE; the oldest posted buffer is in the record.
  const rqHeadNext = RECV_BUFFER.view(cur.rq_buf);
  const bufAddr = readAhead('buf_addr', 64, 'the buffer of the Send: the open message\'s or the oldest posted', (D) => mux(openNext(D), uBufAddr, rqHeadNext.addr));
  const bufLenOf = (D: typeof incoming) => mux(openNext(D), uBufLen, rqHeadNext.len);
  const bufLen = readAhead('buf_len', 32, 'its length', bufLenOf);
  const msgEndOf = (D: typeof incoming) => D.mo.zext(33).add(D.payload_len.zext(33));
  const msgEnd = readAhead('msg_end', 32, 'MO + payload length: the next MO, or the message length', (D) => msgEndOf(D).slice(31, 0));
  const noBuffer = readAhead('no_buffer', 1, 'U2: a new message and no posted buffer for QN 0, no Atomic Request outstanding for QN 2', (D) => {
    const q = qnOfOp(D.opcode);
    const none = q.eq(K.QN.SEND).and(rqEmpty).or(q.eq(K.QN.ATOMIC_RESPONSE).and(orqAtomics.eq(0)));
    return openNext(D).not().and(none);
  });
  const msgEndIn = m.let('msg_end_in', msgEndOf(incoming), { doc: 'MO + payload length of the descriptor in desc_in' });
  const sendTooLong = readAhead('send_too_long', 1, 'a Send past the end of its buffer', (D) =>
    // The two buffers it may be compared side by side, then picked (the pick is not in front of a
    // carry chain): the open message's, the oldest posted (none posted: U2 fails first).
    isSendOp(D.opcode).and(
      oneHotMux([
        [openNext(D), msgEndIn.gt(uBufLen.zext(33))],
        [openNext(D).not(), msgEndIn.gt(rqHeadNext.len.zext(33))],
      ]),
    ),
  );
  // The QP's requests in the IRRQ against IRD (nothing pushes them but POST).
  const irrqAtIrdNext = m.let('irrq_ird_ahead', irrqUsed.zext(16).ge(cfgIrd), { doc: "cur_qp's IRRQ holds IRD requests (A3)" });
  const atomicReqLastOf = (D: typeof incoming) => D.l.and(D.opcode.eq(K.OP.ATOMIC_REQUEST));
  const irdFull = readAhead('irrq_at_ird', 1, 'A3: an Atomic Request and the IRRQ holds IRD requests', (D) => atomicReqLastOf(D).and(irrqAtIrdNext));
  const atomicRespBad = readAhead('atomic_resp_bad', 1, 'the last segment of an Atomic Response that answers no outstanding Atomic Request (ORQ head)', (D) => {
    // The ORQ empty, or its head not an Atomic with this Request Identifier.
    const id = fieldOf(D.rdmap, ATOMIC_RESPONSE.request_id);
    const bad = orqEmpty.or(oh.atomic.and(oh.request_id.eq(id)).not());
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
   * CHECK's verdict, orq_received or the ORQ head (nothing pops it before POST, and an ORQ push
   * is an operation of the engine, in IDLE). The Read Response checks against the ORQ head (T6/T7)
   * are themselves registered a cycle earlier, from the record.
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
  // No lookup yet: no fault. The address is read only after a lookup (a zero-length Read's source
  // address is 0 by its own mux below), so its value here is a tidy reset, not a contract.
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
  // IRD (A3 for a Read Request) from a flag registered a cycle ahead: nothing pushes cur_qp's
  // requests in the cycle before POST or while POST waits.
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
  const postGo = m.let('post_go', inState('POST'), { doc: 'POST acts (its verdict is registered)' });
  const needRoom = t.not(); // a Read or Atomic Request
  // A Read or Atomic Request is answered from memory that every earlier Write and Send has reached
  // (RFC 5040 §5.5 rule 6): it enters the IRRQ only when the placements before it have landed.
  const placed = cmdValid.not().and(placeIdle);
  // The IRRQ full as of the last cycle (the queue, or cur_qp's irrqDepth requests): only POST
  // pushes (as it leaves), so it is at most that full now; a take in the last cycle costs one more
  // cycle of waiting.
  const irrqWasFull = everyCycle('irrq_was_full', 1, "the IRRQ, or cur_qp's share of it, was full in the last cycle", irrq.full.or(irrqUsed.ge(lit(ib, irrqDepth))));
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
      // term_push is set from term_queued below, the same condition flat; a fenced QP's abort
      // before its first ULPDU holds its Terminate in the record (term_held) instead.
      if (from === 'abort') m.when(fenceHolds, () => m.set(cur.term_held, 1));
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
  // AND-OR over the states that fail: term_push takes it directly instead of through the state
  // machine's if/else chain.
  const termQueued = m.let(
    'term_queued',
    termSent.not().and(
      anyOf([
        startAbort.and(txStopped.not()).and(fenceHolds.not()),
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
  // Nothing is popped from an empty ring: a new message without a buffer fails U2 in CHECK.
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


  // ---- What enters the IRRQ, and the operations on the record ---------------------------------------
  const termEntry = REQ.pack({
    qp: curQp,
    // A flush's new generation is in cur_gen a cycle after it (flushed): the Terminate has it.
    gen: mux(flushed, genNext, cur.gen),
    kind: lit(2, RESP_REQ_KIND.TERMINATE),
    // A stream sends one Terminate: the first MSN of QN 2 (RFC 5041 §5.1).
    msn: cfgNow.initial_msn,
    mulpdu: cfgNow.mulpdu,
    big_endian: cfgNow.big_endian,
    body: TERMINATE_REQ.pack({
      layer: term.err.slice(1, 0).zext(4),
      etype: term.err.slice(5, 2),
      code: term.err.slice(13, 6),
      m: term.md,
      d: term.md,
      r: term.r,
      seg_len: term.segLen,
      tagged: term.tagged,
      ddp_hdr: term.ddpHdr,
      rdma_hdr: term.rdmaHdr,
    }).zext(RESP_BODY_BITS),
  });
  const requestEntry = REQ.pack({
    qp: curQp,
    gen: cur.gen,
    kind: mux(atomicReq, lit(2, RESP_REQ_KIND.ATOMIC), lit(2, RESP_REQ_KIND.READ_RESPONSE)),
    msn: cur.atomic_msn,
    mulpdu: cfgNow.mulpdu,
    big_endian: cfgNow.big_endian,
    body: irrqData.zext(RESP_BODY_BITS),
  });
  // They never meet: a Terminate waiting holds the engine in IDLE, and only POST pushes a request.
  m.assign(irrqEntry, mux(termPush, termEntry, requestEntry));
  // cfg: a new connection; the record restarts from the configuration, every MSN from the first.
  const cfgArg = QP_RX_CFG.view(inArg.slice(QP_RX_CFG.width - 1, 0), { m, prefix: 'op_cfg' });
  const restartRecord = CTX.update(CTX.zero(), {
    cfg: inArg.slice(QP_RX_CFG.width - 1, 0),
    rx_msn_0: cfgArg.initial_msn,
    rx_msn_1: cfgArg.initial_msn,
    rx_msn_2: cfgArg.initial_msn,
    rx_msn_3: cfgArg.initial_msn,
    atomic_msn: cfgArg.initial_msn,
    // Its requests of the last connection still in the IRRQ become stale; the count goes on.
    gen: genNext,
    pushed: cur.pushed,
  });
  const restarted = CTX.view(restartRecord);
  // A receive buffer or an ORQ entry goes to slot head + count of the QP's ring (and into the
  // record when it is the oldest).
  const rqFull = m.let('rq_full', cur.rq_count.bit(rb), { doc: "cur_qp's receive ring is full" });
  // ORD (RFC 5040 §6.1): a QP has fewer than cfg_ord Reads and Atomics outstanding (0x3FFF, "do not
  // negotiate", or anything above the depth leaves the depth as the limit).
  const orqFull = m.let('orq_full', cur.orq_count.bit(ob).or(cur.orq_count.zext(16).ge(cfgNow.ord)), { doc: "cur_qp's ORQ is full, or ORD requests are outstanding" });
  const recvArg = inArg.slice(RECV_BUFFER.width - 1, 0);
  const orqArg = inArg.slice(ORQ_ENTRY.width - 1, 0);
  rqRing.ram.write(recvTake.and(rqFull.not()), rqRing.at(curQp, cur.rq_head.add(cur.rq_count.slice(rb - 1, 0))), recvArg);
  orqRing.ram.write(orqTake.and(orqFull.not()), orqRing.at(curQp, cur.orq_head.add(cur.orq_count.slice(ob - 1, 0))), orqArg);

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
  const loaded = CTX.view(ctx.data);
  m.sync(() => {
    // A switch: cur_qp's record was written back (qp_ctx above); in_qp's, read ahead, comes in.
    m.when(switching, () => {
      m.set(curQp, inQp);
      m.set(curValid, 1);
      for (const f of CTX.fields) m.set(cur[f.name as CtxField], loaded[f.name as CtxField]);
    });
    m.when(cmdReady, () => m.set(cmdValid, 0));
    m.when(evtMove, () => m.set(evtValid, 0));
    m.when(firstReady, () => m.set(firstValid, 0));
    m.set(orqDone, orqPop);
    m.set(orqAck, orqTake);
    m.set(cfgDone, cfgTake);
    m.set(orqAckOk, orqFull.not());
    m.set(stopped, flush);
    m.set(stoppedQp, curQp);
    m.set(flushed, flush);
    m.when(flushed, () => m.set(cur.gen, genNext));
    m.when(termQueued, () => m.set(termPush, 1));
    m.when(termPushNow, () => {
      m.set(termPush, 0);
      m.set(cur.pushed, cur.pushed.add(1));
    });
    m.set(pushed, irrqPush);
    m.set(pushedAtomic, atomicReq);
    m.when(pushed, () => {
      m.set(cur.pushed, cur.pushed.add(1));
      m.when(pushedAtomic, () => m.set(cur.atomic_msn, cur.atomic_msn.add(1)));
    });
    // The oldest buffer and ORQ entry after a pop, from the ring.
    m.when(rqRefill.and(rqEmpty.not()), () => m.set(cur.rq_buf, rqRing.ram.data));
    m.when(orqRefill.and(orqEmpty.not()), () => m.set(cur.orq_entry, orqRing.ram.data));
    m.when(rqPop, () => {
      m.set(cur.rq_head, cur.rq_head.add(1));
      m.set(cur.rq_count, cur.rq_count.sub(1));
    });
    m.when(orqPop, () => {
      m.set(cur.orq_head, cur.orq_head.add(1));
      m.set(cur.orq_count, cur.orq_count.sub(1));
      m.when(oh.atomic, () => m.set(orqAtomics, orqAtomics.sub(1)));
    });
    m.when(inState('IDLE').and(firstDue), () => {
      m.set(firstValid, 1);
      m.set(firstQp, curQp);
      m.set(firstDue, 0);
    });
    // Operations (IDLE, in_take).
    m.when(cfgTake, () => {
      for (const f of CTX.fields) m.set(cur[f.name as CtxField], restarted[f.name as CtxField]);
    });
    m.when(recvTake, () => {
      m.when(rqFull, () => m.set(recvFull, 1), () => {
        m.set(cur.rq_count, cur.rq_count.add(1));
        m.when(rqEmpty, () => m.set(cur.rq_buf, recvArg));
      });
    });
    m.when(orqTake, () => {
      m.when(orqFull.not(), () => {
        m.set(cur.orq_count, cur.orq_count.add(1));
        m.when(orqEmpty, () => m.set(cur.orq_entry, orqArg));
        m.when(ORQ_ENTRY.view(orqArg).atomic, () => m.set(orqAtomics, orqAtomics.add(1)));
      });
    });
    m.when(injTake, () => {
      m.set(injPending, 1);
      m.set(injErrR, inArg.slice(13, 0));
      m.set(injNz, inArg.slice(13, 0).ne(0));
    });

    m.switch(st, [
      [
        fsm.value('IDLE'),
        () => {
          // RFC 5040 §7.1 rule 1: an error not tied to an incoming message; no headers.
          m.when(startAbort.and(termSent.not()).and(txStopped.not()), () => fail('abort'));
          m.when(take, () => {
            m.set(d, inData);
            for (const [r, v] of ahead) m.set(r, v);
            m.set(mpaBad, inMpaBad);
            m.set(mpaCode, inMpaCode);
            m.set(mpaClosed, inMpaCode.eq(LlpError.TCP_CLOSED.code));
            m.set(cur.mpa_err, cur.mpa_err.or(inMpaBad));
            // MPA fencing: the QP's first ULPDU, good or failed, opens it once it is decided; an
            // abort's Terminate that waited for it goes into the IRRQ now.
            m.set(cur.arrived, 1);
            m.set(firstDue, fenceHolds);
            // Its fields: the abort's, written with the others below (m_req_term fields).
            m.when(cur.term_held, () => {
              m.set(cur.term_held, 0);
              m.set(termPush, 1);
            });
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

  // The m_req_term fields: termFields (above) in each state that can fail.
  const heldRelease = m.let('term_held_release', take.and(cur.term_held), { doc: "a fenced QP's first ULPDU releases the Terminate of its abort" });
  m.sync(() =>
    m.when(heldRelease, () => termFields(verdictOf(eLocal), false), () =>
      m.when(termSent.not(), () =>
        fsm.cases({
          // RFC 5040 §7.1 rule 1: an abort is not tied to an incoming message; no headers.
          IDLE: () => termFields(verdictOf(eLocal), false),
          DECIDE: () => m.when(mpaBad, () => termFields(verdictOf(llpErr), false), () => termFields(verdictOf(checkCode), true)),
          POST: () => termFields(postErr, true),
          IWAIT: () => termFields(verdictOf(invErr), true),
        }),
      ),
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
