import { laneShiftRight } from '../lib/lane-shift';
import { TAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { stateMachine } from '../lib/fsm';
import { enumConstants } from '../lib/ports';
import { sourceStream } from '../core/stream';
import { atomicUnitModule } from './atomic-unit';
import { ULPDU_LEFT_BITS, fixedUlpduShifter, outputRegister } from './ddp-tx-output';
import { readPort, segmentOverlayLanes, segmenter } from './ddp-tx-segmenter';
import { TERMINATE_ULPDU_MAX, atomicResponseUlpdu, readResponseHeader, terminateUlpdu } from './rdmap-tx-resp-ulpdu';
import { checkRnicWidth } from './rnic-widths';
import { fifo } from '../lib/fifo';
import { indexBits } from '../lib/ram';

/**
 * The transmit side of the responder of N QPs: response commands in, ULPDUs out to mpa_tx_w<W>,
 * one per m_axis packet, tid naming the QP, octet for octet what ts-model/rnic/endpoint.ts sends
 * (`answerRequests`, `fail`). It keeps no per-QP state: each request brings its QP's MULPDU, byte
 * order and MSN (ddp_rx_ctl's IRRQ, ddp-rx-ctl-queues.ts).
 *
 * Requests (req_kind), taken one at a time in the order the responses must go out:
 * - 0 RDMA Read Response (RFC 5040 §4.5; spec/ddp-rdmap.md §4): req_size octets read from host
 *   memory at req_src_addr (any alignment), cut into tagged segments of at most req_mulpdu − 14
 *   payload octets (`segmentMessage`): STag = req_sink_stag, TO = req_sink_to + offset mod 2^64,
 *   L on the last; a zero-length Read is one empty segment.
 * - 1 Atomic Response (RFC 7306 §5.2.2): the atomic_unit child reads the 8-octet target at
 *   req_addr, runs FetchAdd / CmpSwap (req_big_endian: the target's byte order), writes back and
 *   returns the original value, sent with QN 3, MSN req_msn, Request Identifier.
 * - 2 Terminate (RFC 5040 §4.8; spec/ddp-rdmap.md §2.4, §8): QN 2, MSN req_msn; the DDP
 *   Segment Length and the copied DDP header iff req_term_d, the copied RDMA header iff req_term_r.
 * - 3 is taken and dropped.
 * m_axis_tid comes from a FIFO of the QPs of the responses taken and not yet sent (TID_QUEUE).
 *
 * The Read Response datapath (reads, FIFO, realignment, segmentation) and the m_axis side (output
 * register, fixed-ULPDU shift register) are generator functions shared with ddp_tx_w<W>:
 * ddp-tx-segmenter.ts and ddp-tx-output.ts.
 *
 * Memory reads are W-octet aligned beats, data in request order with any latency ≥ 1 and always
 * accepted: a Read Response issues reads while (reads issued − beats consumed) < 256, the depth of
 * its data FIFO, so 256 reads may be in flight. Segments are realigned from the source phase to
 * payload lane 14 mod W by a rotate over {newest beat, held beat}; a beat that straddles two
 * segments is consumed once and held for the next. The atomic path adapts atomic_unit's 8-octet
 * ports: the beat address is the target's with the low bits cleared, the target's 8 lanes are
 * selected on read and registered (a cycle before the atomic unit sees them), and the write repeats the word with wr_strb on its 8 lanes only.
 *
 * Rate: a Read Response leaves one beat per cycle while its data keeps up (rd_ready high, read
 * latency up to about 250 cycles); a segment costs exactly its ⌈(14 + payload)/W⌉ beats, back
 * to back across segments, plus one cycle per message when the first payload octets straddle two
 * memory beats. First read one cycle after the request handshake; the first output beat three
 * cycles after its data arrives (the FIFO's RAM read register, then the output stages: realign,
 * output register, OUTPUT_STAGES in ddp-tx-output.ts). Atomic
 * Response and Terminate come from a shift register, one beat per cycle. The next request is taken the cycle after the previous response's last beat is built.
 * m_axis: registered; tready stops at the realign stage's skid buffer (ddp-tx-output.ts). Lanes past
 * tkeep on the last beat are unspecified.
 */
/** req_kind values. */
export const RESP_KIND = Object.freeze({ READ_RESPONSE: 0, ATOMIC: 1, TERMINATE: 2 });
const RESP_KIND_NAME = { READ_RESPONSE: 'RDMA Read Response', ATOMIC: 'Atomic Response', TERMINATE: 'Terminate' } as const;

/**
 * Read data FIFO depth in beats (block RAM); also the bound on reads in flight, so a Read Response
 * leaves at one beat per cycle up to a read latency of about this many cycles.
 */
export const RDMAP_TX_RESP_FIFO_DEPTH = 256;

/** Idle; sending a Read Response; the atomic unit runs; sending an Atomic Response or a Terminate. */
const STATES = ['IDLE', 'READ', 'ATOMIC', 'SHORT'] as const;
const MEANING = { IDLE: 'no response', READ: 'sending a Read Response', ATOMIC: 'the atomic unit runs', SHORT: 'sending an Atomic Response or a Terminate' } as const;

/** Responses taken and not yet sent: the one being built, and those in the output stages. */
const TID_QUEUE = 4;

export const rdmapTxRespName = (bytes: number, qps: number): string => `rdmap_tx_resp_w${bytes}_q${qps}`;

export function rdmapTxRespModule(bytes: number, qps = 1): Module {
  checkRnicWidth('rdmap_tx_resp', bytes);
  const W = bytes;
  const qb = indexBits(Math.max(qps, 2));
  const lw = Math.log2(W);
  const depth = RDMAP_TX_RESP_FIFO_DEPTH;
  const m = new ModuleBuilder(
    rdmapTxRespName(W, qps),
    'RDMAP responder transmit: RDMA Read Responses (data read from host memory, segmented to\n' +
      'MULPDU, RFC 5040 section 4.5, RFC 5041 section 5.2), Atomic Responses (RFC 7306 section 5.2.2,\n' +
      'through atomic_unit) and Terminates (RFC 5040 section 4.8) as ULPDUs, one per m_axis packet.\n' +
      `${W} octets per beat; a Read Response at one output beat per cycle.`,
    { bytes: W, qps, fifo_depth: depth },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const rq = 'Response request (one per response, in send order)';
  const reqValid = m.input('req_valid', 1, { group: rq });
  const reqReady = m.output('req_ready', 1, { group: rq });
  const reqKind = m.input('req_kind', 2, { group: rq, doc: '0 Read Response, 1 Atomic Response, 2 Terminate' });
  const reqQp = m.input('req_qp', qb, { group: rq, doc: 'the QP the response is for (m_axis_tid)' });
  const reqMsn = m.input('req_msn', 32, { group: rq, doc: 'Atomic Response: its MSN of QN 3; Terminate: its MSN of QN 2' });
  const reqMulpdu = m.input('req_mulpdu', 16, { group: rq, doc: "the QP's largest ULPDU (>= 64): Read Response segments carry at most req_mulpdu - 14 octets" });
  const reqBigEndian = m.input('req_big_endian', 1, { group: rq, doc: "the QP's atomic targets are big-endian in host memory" });
  const reqSinkStag = m.input('req_sink_stag', 32, { group: rq, doc: 'Read: Data Sink STag' });
  const reqSinkTo = m.input('req_sink_to', 64, { group: rq, doc: 'Read: Data Sink Tagged Offset' });
  const reqSrcAddr = m.input('req_src_addr', 64, { group: rq, doc: 'Read: translated host address of the source, any alignment' });
  const reqSize = m.input('req_size', 32, { group: rq, doc: 'Read: RDMA Read Message Size (0 allowed)' });
  const reqAopcode = m.input('req_aopcode', 4, { group: rq, doc: 'Atomic: AOpCode 0x0 FetchAdd / 0x2 CmpSwap' });
  const reqAddr = m.input('req_addr', 64, { group: rq, doc: 'Atomic: translated, 8-octet aligned target address' });
  const reqAddSwap = m.input('req_add_swap', 64, { group: rq, doc: 'Atomic: Add Data / Swap Data' });
  const reqAddSwapMask = m.input('req_add_swap_mask', 64, { group: rq, doc: 'Atomic: Add Mask / Swap Mask' });
  const reqCompare = m.input('req_compare', 64, { group: rq, doc: 'Atomic: Compare Data' });
  const reqCompareMask = m.input('req_compare_mask', 64, { group: rq, doc: 'Atomic: Compare Mask' });
  const reqRequestId = m.input('req_request_id', 32, { group: rq, doc: 'Atomic: Request Identifier' });
  const reqTermLayer = m.input('req_term_layer', 4, { group: rq, doc: 'Terminate: Layer' });
  const reqTermEtype = m.input('req_term_etype', 4, { group: rq, doc: 'Terminate: Error Type' });
  const reqTermCode = m.input('req_term_code', 8, { group: rq, doc: 'Terminate: Error Code' });
  const reqTermM = m.input('req_term_m', 1, { group: rq, doc: 'Terminate: M (segment length valid)' });
  const reqTermD = m.input('req_term_d', 1, { group: rq, doc: 'Terminate: D (segment length and DDP header present)' });
  const reqTermR = m.input('req_term_r', 1, { group: rq, doc: 'Terminate: R (RDMA header present)' });
  const reqTermSegLen = m.input('req_term_seg_len', 16, { group: rq, doc: 'Terminate: DDP Segment Length' });
  const reqTermTagged = m.input('req_term_tagged', 1, { group: rq, doc: 'Terminate: the copied DDP header is tagged (14 octets, else 18)' });
  const reqTermDdpHdr = m.input('req_term_ddp_hdr', 18 * 8, { group: rq, doc: 'Terminate: copied DDP header, octet j in [8j+7:8j]' });
  const reqTermRdmaHdr = m.input('req_term_rdma_hdr', 28 * 8, { group: rq, doc: 'Terminate: copied RDMA header, octet j in [8j+7:8j]' });

  const rd = readPort(m, W);

  const wrg = 'Host memory write (atomic write-back)';
  const wrValid = m.output('wr_valid', 1, { group: wrg });
  const wrReady = m.input('wr_ready', 1, { group: wrg });
  const wrAddr = m.output('wr_addr', 64, { group: wrg, doc: 'a multiple of W' });
  const wrData = m.output('wr_data', 8 * W, { group: wrg, doc: 'lane j = octet at wr_addr + j' });
  const wrStrb = m.output('wr_strb', W, { group: wrg });

  const o = sourceStream({ bytes: W, user: ULPDU_LEFT_BITS, id: qb }).declare(m, 'm_axis', 'AXI4-Stream output: ULPDUs to mpa_tx (m_axis); tuser = octets of the ULPDU from this beat on; tid = the QP');
  const idle = m.output('idle', 1, { group: 'Status', doc: 'no response in progress and nothing left to send' });

  const KIND = enumConstants(m, 'KIND', 2, RESP_KIND, (k) => `req_kind: ${RESP_KIND_NAME[k]}`);

  const fsm = stateMachine(m, 'state', STATES, { reset: 'IDLE', meaning: MEANING });
  const state = fsm.state;
  const inIdle = m.let('in_idle', fsm.is('IDLE'));
  const inRead = m.let('in_read', fsm.is('READ'));
  const inAtomic = m.let('in_atomic', fsm.is('ATOMIC'));
  const inShort = m.let('in_short', fsm.is('SHORT'));

  // The request's QP settings, taken with it: they hold while its response is built.
  const msn = m.reg('resp_msn', 32, { doc: 'req_msn of the response in progress' });
  const cfgMulpdu = m.reg('resp_mulpdu', 16, { doc: 'req_mulpdu of the response in progress' });

  // ---- Output register ------------------------------------------------------------------------
  const out = outputRegister(m, o, W, { overlayLanes: segmentOverlayLanes(W, false), flag: true });
  const outFree = out.free;

  // ---- Atomic unit and the memory-port adapter -------------------------------------------------
  const au = {
    reqReady: m.wire('au_req_ready', 1),
    rdValid: m.wire('au_rd_valid', 1),
    rdAddr: m.wire('au_rd_addr', 64),
    wrValid: m.wire('au_wr_valid', 1),
    wrAddr: m.wire('au_wr_addr', 64),
    wrData: m.wire('au_wr_data', 64),
    wrStrb: m.wire('au_wr_strb', 8),
    rspValid: m.wire('au_rsp_valid', 1),
    rspTag: m.wire('au_rsp_tag', 32),
    rspOrig: m.wire('au_rsp_orig', 64),
    rspStatus: m.wire('au_rsp_status', 2),
    rspMatch: m.wire('au_rsp_match', 1),
  };
  m.allowUnused(au.rspStatus, 'the caller guarantees a known AOpCode and an aligned target');
  m.allowUnused(au.rspMatch, 'the Atomic Response carries the original value only');
  m.allowUnused(au.rdAddr, 'bits [2:0] are 0 (8-octet aligned target); the beat address clears the lane bits');
  m.allowUnused(au.wrAddr, 'bits [2:0] are 0 (8-octet aligned target); the beat address clears the lane bits');
  // The atomic unit is idle whenever this block is: it loads its response and goes to IDLE in
  // one step, and this block leaves ATOMIC only by taking that response. So its req_ready is not
  // in the handshake (a path from the unit's state into this FSM's next state).
  m.allowUnused(au.reqReady, 'high whenever this block is in IDLE (see req_fire)');
  const reqFire = m.let('req_fire', reqValid.and(inIdle));
  // The target's 8 lanes of the read beat, registered: the lane select and the atomic unit's
  // CmpSwap compare on the arriving data would not fit one cycle (a cycle more per atomic).
  const auRdValid = m.reg('au_rd_data_valid', 1, { reset: 0, doc: 'the atomic unit\'s read data arrives' });
  const auRdData = m.reg('au_rd_data', 64, { doc: "the target's 8 lanes of the read beat" });
  const auRdWord = W === 8 ? rd.data : laneShiftRight(m, 'au_rd_word', rd.data, au.rdAddr.slice(lw - 1, 3), 64, 1);
  m.sync(() => {
    m.set(auRdValid, rd.dataValid.and(inAtomic));
    m.set(auRdData, auRdWord);
  });
  m.instance(atomicUnitModule(), 'atomic', {
    clk,
    rst,
    cfg_big_endian: reqBigEndian,
    req_valid: reqFire.and(reqKind.eq(KIND.ATOMIC)),
    req_ready: au.reqReady,
    req_aopcode: reqAopcode,
    req_addr: reqAddr,
    req_add_swap: reqAddSwap,
    req_add_swap_mask: reqAddSwapMask,
    req_compare: reqCompare,
    req_compare_mask: reqCompareMask,
    req_tag: reqRequestId,
    rd_valid: au.rdValid,
    rd_ready: rd.ready,
    rd_addr: au.rdAddr,
    rd_data_valid: auRdValid,
    rd_data: auRdData,
    wr_valid: au.wrValid,
    wr_ready: wrReady,
    wr_addr: au.wrAddr,
    wr_data: au.wrData,
    wr_strb: au.wrStrb,
    rsp_valid: au.rspValid,
    rsp_ready: inAtomic,
    rsp_tag: au.rspTag,
    rsp_orig: au.rspOrig,
    rsp_status: au.rspStatus,
    rsp_match: au.rspMatch,
  });
  const beatAddr = (a: Expr) => cat(a.slice(63, lw), lit(lw, 0));
  m.assign(wrValid, au.wrValid);
  m.assign(wrAddr, beatAddr(au.wrAddr));
  m.assign(wrData, au.wrData.repeat(W / 8));
  m.assign(wrStrb, W === 8 ? au.wrStrb : cat(...Array.from({ length: W / 8 }, (_, g) => mux(au.wrAddr.slice(lw - 1, 3).eq(g), au.wrStrb, lit(8, 0))).reverse()));
  const atomicDone = m.let('atomic_done', inAtomic.and(au.rspValid));

  // ---- Read Response: reads, data FIFO, realignment, segmentation -----------------------------
  const rr = segmenter(m, {
    W,
    depth,
    prefix: 'rr',
    active: inRead,
    outFree,
    cfgMulpdu,
    // The first segment is planned as the request is taken, before resp_mulpdu holds its MULPDU.
    startMulpdu: { mulpdu: reqMulpdu, rooms: [reqMulpdu.sub(TAGGED_HEADER_SIZE)] },
    untagged: null,
    request: { phase: reqSrcAddr.slice(lw - 1, 0), size: reqSize },
    // One Read Response at a time, read while it is sent (the atomic unit shares the port): a
    // request is taken only while idle, so the fetcher has read the last one and needs no queue.
    fetch: { valid: reqFire.and(reqKind.eq(KIND.READ_RESPONSE)), addr: reqSrcAddr, size: reqSize, queue: 0 },
    fetchGate: inRead,
    rd,
    sharedRead: { valid: au.rdValid, addr: beatAddr(au.rdAddr), owns: inAtomic },
    header: readResponseHeader,
  });

  // ---- Atomic Response and Terminate: a shift register of whole beats -------------------------
  const short = fixedUlpduShifter(m, { W, maxOctets: TERMINATE_ULPDU_MAX, active: inShort, outFree });
  const atomicUlpdu = atomicResponseUlpdu(msn, au.rspTag, au.rspOrig);
  const term = terminateUlpdu(reqMsn, {
    layer: reqTermLayer,
    etype: reqTermEtype,
    code: reqTermCode,
    m: reqTermM,
    d: reqTermD,
    r: reqTermR,
    segLen: reqTermSegLen,
    tagged: reqTermTagged,
    ddpHeader: reqTermDdpHdr,
    rdmaHeader: reqTermRdmaHdr,
  });

  m.assign(reqReady, inIdle);
  m.assign(idle, inIdle.and(out.busy.not()));
  // Read Responses and short ULPDUs into the output stages; the flag marks a response's last beat.
  out.connect([{ ...rr.beat, flag: rr.beat.last.and(rr.last) }, { ...short.beat, flag: short.beat.last }]);
  // The QP of each response taken, for m_axis_tid until its last beat leaves.
  const sends = m.let('resp_starts', reqFire.and(reqKind.ne(3)), { doc: 'a response starts (kind 3 sends nothing)' });
  const tids = fifo(m, 'tid_q', qb, TID_QUEUE, { push: sends, data: reqQp, pop: o.valid.and(o.ready).and(out.flag) });
  m.assign(o.id!, tids.head);

  m.sync(() => {
    // Requests.
    m.when(reqFire, () => {
      m.set(msn, reqMsn);
      m.set(cfgMulpdu, reqMulpdu);
    });
    m.when(reqFire, () =>
      m.switch(reqKind, [
        [
          KIND.READ_RESPONSE,
          () => {
            fsm.goto('READ');
            rr.start(reqSinkStag, reqSinkTo);
          },
        ],
        [KIND.ATOMIC, () => fsm.goto('ATOMIC')],
        [
          KIND.TERMINATE,
          () => {
            fsm.goto('SHORT');
            short.load(term.octets, term.length);
          },
        ],
      ]),
    );
    m.when(atomicDone, () => {
      fsm.goto('SHORT');
      short.load(atomicUlpdu, lit(7, atomicUlpdu.length));
    });

    rr.sync(() => fsm.goto('IDLE'));
    short.sync(() => fsm.goto('IDLE'));
  });
  return m.build();
}
