import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { ATOMIC_REQUEST_HEADER_SIZE, Opcode } from '../../ts-model/rdmap/constants';
import { lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sourceStream } from '../core/stream';
import { ULPDU_LEFT_BITS, fixedUlpduShifter, outputRegister } from './ddp-tx-output';
import { readPort, segmenter } from './ddp-tx-segmenter';
import { ATOMIC_TAIL_MAX, atomicRequestTail, atomicRequestUlpdu, immediateUlpdu, readRequestUlpdu, segmentHeader } from './ddp-tx-ulpdu';
import { checkRnicWidth } from './rnic-widths';

/**
 * The transmit side of one QP's requester: work requests in, ULPDUs out to mpa_tx_w<W>, one per
 * m_axis packet, octet for octet what ts-model/rnic/endpoint.ts sends from `post()` (with ORD
 * credits never short: Reads and Atomics go out in order with the rest).
 *
 * Work requests (wr_kind), taken one at a time, in order:
 * - 0 RDMA Write (RFC 5040 §4.3, RFC 5041 §5.2): wr_len octets read from host memory at wr_addr
 *   (any alignment), cut into tagged segments of at most cfg_mulpdu − 14 payload octets: STag =
 *   wr_stag, TO = wr_to + offset mod 2^64, L on the last; a zero-length Write is one empty segment.
 * - 2 Send (RFC 5040 §4.3): likewise in untagged segments of at most cfg_mulpdu − 18 octets on
 *   QN 0, the message's MSN, MO = offset; opcode Send / Send with SE (wr_solicited) / with
 *   Invalidate (wr_invalidate: RsvdULP2 = wr_stag) / SE with Invalidate.
 * - 1 RDMA Read Request (RFC 5040 §4.4): QN 1, its MSN; Data Sink wr_sink_stag / wr_sink_to,
 *   size wr_len, Data Source wr_stag / wr_to.
 * - 3 Immediate Data (+SE) (RFC 7306 §6): QN 0, its MSN, wr_imm.
 * - 4 Atomic Request (RFC 7306 §5.2.1): QN 1, its MSN; wr_aopcode, wr_request_id, wr_stag,
 *   wr_to, wr_add_swap(_mask), wr_compare(_mask). It is 70 octets: below cfg_mulpdu 70 it goes
 *   out as two segments, as segmentMessage cuts it (MO = cfg_mulpdu − 18 on the second).
 * - 5..7 are taken and dropped.
 * QN 0 and QN 1 count their MSNs from cfg_initial_msn, loaded while rst is high (RFC 5041 §5.1).
 *
 * Writes and Sends go through the segmenter shared with rdmap_tx_resp_w<W> (ddp-tx-segmenter.ts:
 * W-octet aligned memory reads, 16 in flight, realigned to the payload lanes); the fixed ULPDUs
 * through its shift register (ddp-tx-output.ts), one beat per cycle.
 *
 * Rate: a Write or Send leaves one beat per cycle while its data keeps up (rd_ready high, read
 * latency ≤ 14): a segment costs exactly ⌈(header + payload)/W⌉ beats, back to back, plus one
 * cycle per message when its first payload octets straddle two memory beats. First read one cycle
 * after the work request handshake; the first output beat one cycle after its data is in the FIFO.
 * The next work request is taken the cycle after the previous one's last beat is built.
 * m_axis: registered; tready reaches the FIFO pop combinationally (no skid buffer). Lanes past
 * tkeep on the last beat are unspecified. m_sent_valid is high in the cycle the last beat of a
 * work request's last ULPDU is taken.
 */
/** wr_kind values. */
export const WR_KIND = Object.freeze({ WRITE: 0, READ: 1, SEND: 2, IMMEDIATE: 3, ATOMIC: 4 });

/** Read data FIFO depth in beats; also the bound on reads in flight. */
export const DDP_TX_FIFO_DEPTH = 16;

const STATE = Object.freeze({ IDLE: 0, DATA: 1, SHORT: 2 });

/** The longest fixed ULPDU: the Atomic Request. */
const FIXED_ULPDU_MAX = UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE;

export function ddpTxModule(bytes: number): Module {
  checkRnicWidth('ddp_tx', bytes);
  const W = bytes;
  const m = new ModuleBuilder(
    `ddp_tx_w${W}`,
    'RDMAP requester transmit: work requests to ULPDUs, one per m_axis packet: RDMA Writes and\n' +
      'Sends (data read from host memory, segmented to MULPDU, RFC 5040 section 4.3, RFC 5041\n' +
      'section 5.2), RDMA Read Requests (RFC 5040 section 4.4), Immediate Data and Atomic Requests\n' +
      `(RFC 7306 sections 6, 5.2.1). ${W} octets per beat; a Write or Send at one output beat per cycle.`,
    { bytes: W, fifo_depth: DDP_TX_FIFO_DEPTH },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const cg = 'Configuration';
  const cfgMulpdu = m.input('cfg_mulpdu', 16, { group: cg, doc: 'largest ULPDU (>= 64): segments carry at most cfg_mulpdu - 14 (Write) or - 18 (Send) octets' });
  const cfgInitialMsn = m.input('cfg_initial_msn', 32, { group: cg, doc: 'first MSN of QN 0 and QN 1, loaded while rst is high' });

  const wg = 'Work request (one per message, in send order)';
  const wrValid = m.input('wr_valid', 1, { group: wg });
  const wrReady = m.output('wr_ready', 1, { group: wg });
  const wrKind = m.input('wr_kind', 3, { group: wg, doc: '0 Write, 1 Read, 2 Send, 3 Immediate, 4 Atomic' });
  const wrSolicited = m.input('wr_solicited', 1, { group: wg, doc: 'Send / Immediate: with Solicited Event' });
  const wrInvalidate = m.input('wr_invalidate', 1, { group: wg, doc: 'Send: with Invalidate (of wr_stag)' });
  const wrStag = m.input('wr_stag', 32, { group: wg, doc: 'Write: Data Sink STag; Read: Data Source STag; Atomic: target STag; Send with Invalidate: the STag to invalidate' });
  const wrTo = m.input('wr_to', 64, { group: wg, doc: 'Write: Data Sink TO; Read: Data Source TO; Atomic: target TO' });
  const wrAddr = m.input('wr_addr', 64, { group: wg, doc: 'Write / Send: translated host address of the data, any alignment' });
  const wrLen = m.input('wr_len', 32, { group: wg, doc: 'Write / Send: message size; Read: RDMA Read Message Size (0 allowed)' });
  const wrSinkStag = m.input('wr_sink_stag', 32, { group: wg, doc: 'Read: the local Data Sink STag' });
  const wrSinkTo = m.input('wr_sink_to', 64, { group: wg, doc: 'Read: the local Data Sink TO' });
  const wrImm = m.input('wr_imm', 64, { group: wg, doc: 'Immediate: the data, octet 0 in [63:56]' });
  const wrAopcode = m.input('wr_aopcode', 4, { group: wg, doc: 'Atomic: AOpCode' });
  const wrAddSwap = m.input('wr_add_swap', 64, { group: wg, doc: 'Atomic: Add Data / Swap Data' });
  const wrAddSwapMask = m.input('wr_add_swap_mask', 64, { group: wg, doc: 'Atomic: Add Mask / Swap Mask' });
  const wrCompare = m.input('wr_compare', 64, { group: wg, doc: 'Atomic: Compare Data' });
  const wrCompareMask = m.input('wr_compare_mask', 64, { group: wg, doc: 'Atomic: Compare Mask' });
  const wrRequestId = m.input('wr_request_id', 32, { group: wg, doc: 'Atomic: Request Identifier' });

  const rd = readPort(m, W);

  const o = sourceStream({ bytes: W, user: ULPDU_LEFT_BITS }).declare(m, 'm_axis', 'AXI4-Stream output: ULPDUs to mpa_tx (m_axis); tuser = octets of the ULPDU from this beat on');
  const sg = 'Status';
  const sentValid = m.output('m_sent_valid', 1, { group: sg, doc: "the last beat of a work request's last ULPDU is taken this cycle" });
  const idle = m.output('idle', 1, { group: sg, doc: 'no work request in progress and nothing left to send' });

  const sIdle = m.constant('S_IDLE', 2, STATE.IDLE, 'waiting for a work request');
  const sData = m.constant('S_DATA', 2, STATE.DATA, 'sending a Write or a Send');
  const sShort = m.constant('S_SHORT', 2, STATE.SHORT, 'sending a Read Request, Immediate Data or an Atomic Request');
  const kWrite = m.constant('KIND_WRITE', 3, WR_KIND.WRITE, 'wr_kind: RDMA Write');
  const taggedHdr = m.constant('TAGGED_HDR', 16, TAGGED_HEADER_SIZE, 'tagged DDP header octets (RFC 5041 section 4.2)');
  const untaggedHdr = m.constant('UNTAGGED_HDR', 16, UNTAGGED_HEADER_SIZE, 'untagged DDP header octets (RFC 5041 section 4.3)');

  const state = m.reg('state', 2, { reset: STATE.IDLE });
  const inIdle = m.let('in_idle', state.eq(sIdle));
  const inData = m.let('in_data', state.eq(sData));
  const inShort = m.let('in_short', state.eq(sShort));
  const wrFire = m.let('wr_fire', wrValid.and(inIdle));

  // MSN counters of QN 0 (Send, Immediate) and QN 1 (Read Request, Atomic Request).
  const msnSend = m.reg('msn_send', 32, { doc: 'MSN of the next message on QN 0' });
  const msnRead = m.reg('msn_read', 32, { doc: 'MSN of the next message on QN 1' });

  const out = outputRegister(m, o, W);
  const outDone = m.reg('out_done', 1, { doc: "the output beat ends a work request's last ULPDU" });

  // ---- Write and Send: the shared segmenter ---------------------------------------------------
  const opcode = m.reg('msg_opcode', 4, { doc: 'RDMAP opcode of the Write or Send being sent' });
  const untaggedReg = m.reg('msg_untagged', 1, { doc: 'the message is a Send (untagged, QN 0)' });
  // While idle the segmenter sizes the first segment of the request being taken.
  const untagged = m.let('seg_untagged', mux(inIdle, wrKind.ne(kWrite), untaggedReg), { doc: 'the current message has 18-octet headers' });
  const seg = segmenter(m, {
    W,
    depth: DDP_TX_FIFO_DEPTH,
    prefix: 'tx',
    active: inData,
    outFree: out.free,
    cfgMulpdu,
    hdrSize: mux(untagged, untaggedHdr, taggedHdr),
    untagged,
    request: { prefix: 'wr', what: 'the message', addr: wrAddr, size: wrLen },
    rd,
    sharedRead: null,
    header: (last, stag, to) => segmentHeader({ tagged: untagged.not(), last, opcode, stag, to, msn: msnSend }),
  });
  // Send (3), with Invalidate (4), with SE (5), with SE and Invalidate (6): RFC 5040 §4.3.
  const sendOpcode = mux(
    wrInvalidate,
    mux(wrSolicited, lit(4, Opcode.SEND_SE_INVALIDATE), lit(4, Opcode.SEND_INVALIDATE)),
    mux(wrSolicited, lit(4, Opcode.SEND_SE), lit(4, Opcode.SEND)),
  );

  // ---- Read Request, Immediate Data, Atomic Request: the shift register -----------------------
  const short = fixedUlpduShifter(m, { W, maxOctets: FIXED_ULPDU_MAX, active: inShort, outFree: out.free });
  const readRequest = readRequestUlpdu(msnRead, { sinkStag: wrSinkStag, sinkTo: wrSinkTo, size: wrLen, srcStag: wrStag, srcTo: wrTo });
  const immediate = immediateUlpdu(msnSend, wrSolicited, wrImm);
  // Below MULPDU 70 the Atomic Request is two segments (segmentMessage): the first MULPDU octets,
  // then the rest of Compare Mask from atomic_tail.
  const atomicSplit = m.reg('atomic_split', 1, { reset: 0, doc: "an Atomic Request's second segment is still to send" });
  const atomicTail = m.reg('atomic_tail', 8 * ATOMIC_TAIL_MAX, { doc: 'its payload: the low octets of Compare Mask' });
  const split = m.let('atomic_needs_split', cfgMulpdu.lt(UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE));
  const atomic = atomicRequestUlpdu(msnRead, split.not(), {
    aopcode: wrAopcode,
    requestId: wrRequestId,
    stag: wrStag,
    to: wrTo,
    addSwap: wrAddSwap,
    addSwapMask: wrAddSwapMask,
    compare: wrCompare,
    compareMask: wrCompareMask,
  });
  const tail = atomicRequestTail(msnRead, cfgMulpdu, atomicTail);
  const sizeOf = (octets: readonly unknown[]) => lit(7, octets.length);

  m.assign(wrReady, inIdle);
  m.assign(sentValid, out.valid.and(o.ready).and(outDone));
  m.assign(idle, inIdle.and(out.valid.not()));

  m.sync(() => {
    m.when(rst, () => {
      m.set(msnSend, cfgInitialMsn);
      m.set(msnRead, cfgInitialMsn);
    });

    m.when(wrFire, () =>
      m.switch(wrKind, [
        [
          [WR_KIND.WRITE, WR_KIND.SEND],
          () => {
            m.set(state, sData);
            m.set(opcode, mux(untagged, sendOpcode, lit(4, Opcode.WRITE)));
            m.set(untaggedReg, untagged);
            // A Send's RsvdULP2 carries the STag to invalidate, else 0; its MO counts from 0.
            seg.start(mux(untagged.and(wrInvalidate.not()), lit(32, 0), wrStag), mux(untagged, lit(64, 0), wrTo));
          },
        ],
        [
          WR_KIND.READ,
          () => {
            m.set(state, sShort);
            short.load(readRequest, sizeOf(readRequest));
            m.set(msnRead, msnRead.add(1));
          },
        ],
        [
          WR_KIND.IMMEDIATE,
          () => {
            m.set(state, sShort);
            short.load(immediate, sizeOf(immediate));
            m.set(msnSend, msnSend.add(1));
          },
        ],
        [
          WR_KIND.ATOMIC,
          () => {
            m.set(state, sShort);
            short.load(atomic, mux(split, cfgMulpdu.slice(6, 0), sizeOf(atomic)));
            m.set(atomicSplit, split);
            m.set(atomicTail, wrCompareMask.slice(8 * ATOMIC_TAIL_MAX - 1, 0));
            m.when(split.not(), () => m.set(msnRead, msnRead.add(1)));
          },
        ],
      ]),
    );

    // A Send's MSN moves on once its last segment is built (its headers read msn_send).
    seg.sync(() => {
      m.set(state, sIdle);
      m.when(untaggedReg, () => m.set(msnSend, msnSend.add(1)));
    });
    short.sync(() =>
      m.when(
        atomicSplit,
        () => {
          short.load(tail.octets, tail.length);
          m.set(atomicSplit, 0);
          m.set(msnRead, msnRead.add(1));
        },
        () => m.set(state, sIdle),
      ),
    );
    out.sync([seg.beat, short.beat]);
    m.when(seg.beat.emit, () => m.set(outDone, seg.beat.last.and(seg.last)));
    m.when(short.beat.emit, () => m.set(outDone, short.beat.last.and(atomicSplit.not())));
  });
  return m.build();
}
