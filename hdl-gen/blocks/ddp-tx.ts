import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { ATOMIC_REQUEST_HEADER_SIZE } from '../../ts-model/rdmap/constants';
import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sourceStream } from '../core/stream';
import { ULPDU_LEFT_BITS, fixedUlpduShifter, outputRegister } from './ddp-tx-output';
import { readPort, segmentOverlayLanes, segmenter } from './ddp-tx-segmenter';
import { ATOMIC_TAIL_MAX, atomicRequestTail, atomicRequestUlpdu, immediateUlpdu, readRequestUlpdu, segmentHeader } from './ddp-tx-ulpdu';
import { bramFifo } from '../lib/fifo-bram';
import { stateMachine } from '../lib/fsm';
import { portGroup } from '../lib/ports';
import { record, type FieldDef } from '../lib/record';
import { rnicNames } from './names';
import { WORK_REQUEST } from './records';
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
 * Work requests enter a queue (fifo-bram.ts: ddpTxWrQueue(W) + 1 of them) as soon as there is
 * room (wr_ready = not full) and are sent from its head, one at a time. Writes and Sends go
 * through the segmenter shared with rdmap_tx_resp_w<W> (ddp-tx-segmenter.ts: W-octet aligned
 * memory reads, DDP_TX_FIFO_DEPTH in flight, realigned to the payload lanes); their reads start
 * when they enter the queue, so the data of the messages behind the one being sent is fetched
 * while it is sent. The fixed ULPDUs go through the segmenter's shift register
 * (ddp-tx-output.ts), one beat per cycle.
 *
 * Rate: a Write or Send leaves one beat per cycle while its data keeps up (rd_ready high, read
 * latency up to about DDP_TX_FIFO_DEPTH cycles, paid once for a run of queued messages, not per
 * message): a segment costs exactly ⌈(header + payload)/W⌉ beats, back to back, plus one cycle per
 * message when its first payload octets straddle two memory beats and one between work requests.
 * First read one cycle after the work request handshake; the first output beat three cycles after
 * its data arrives (the FIFO's RAM read register, then the output stages: realign, output
 * register, OUTPUT_STAGES in ddp-tx-output.ts). A work request that
 * finds the queue empty and nothing being sent starts in the cycle it is taken.
 * m_axis: registered; tready stops at the realign stage's skid buffer (ddp-tx-output.ts). Lanes past
 * tkeep on the last beat are unspecified. m_sent_valid is high in the cycle the last beat of a
 * work request's last ULPDU is taken.
 */
export { WR_KIND } from './names';

/**
 * Read data FIFO depth in beats; also the bound on reads in flight, so one beat per cycle holds up
 * to a read latency of about this many cycles (host memory over PCIe: 100–250 cycles at 250 MHz).
 */
export const DDP_TX_FIFO_DEPTH = 256;
/**
 * Work requests queued ahead of the one being sent (their data is read ahead), plus one in the
 * head. Read-ahead must cover the memory latency in messages: a 4 KiB Write is 512 beats at
 * W = 8, so two already hide hundreds of cycles there, while at W = 64 it is 64 beats and takes
 * eight. An entry is about 590 bits: on an iCE40 each costs block RAM or flip-flops.
 */
export const ddpTxWrQueue = (W: number): number => (W >= 32 ? 8 : 2);

/** Idle; sending a Write or a Send; sending a Read Request, Immediate Data or an Atomic Request. */
const STATES = ['IDLE', 'DATA', 'SHORT'] as const;
const MEANING = { IDLE: 'no work request', DATA: 'sending a Write or a Send', SHORT: 'sending a fixed-length ULPDU' } as const;

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
    { bytes: W, fifo_depth: DDP_TX_FIFO_DEPTH, wr_queue: ddpTxWrQueue(W) },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const cg = 'Configuration';
  const cfgMulpdu = m.input('cfg_mulpdu', 16, { group: cg, doc: 'largest ULPDU (>= 64): segments carry at most cfg_mulpdu - 14 (Write) or - 18 (Send) octets' });
  const cfgInitialMsn = m.input('cfg_initial_msn', 32, { group: cg, doc: 'first MSN of QN 0 and QN 1, loaded while rst is high' });

  const wg = 'Work request (one per message, in send order)';
  const wrPorts = portGroup(m, 'wr', WORK_REQUEST, 'input', wg).ports;
  const port = {
    valid: m.input('wr_valid', 1, { group: wg }),
    ready: m.output('wr_ready', 1, { group: wg, doc: 'the work request queue has room' }),
    ...wrPorts,
  };
  // The work request queue: a request is taken as soon as there is room, so the fetcher can read
  // the data of the Writes and Sends behind the one being sent.
  // A queue entry is the work request but for its address: the fetcher has it; the sender needs
  // only its phase in the beat (the realignment).
  const { addr: _addr, ...kept } = Object.fromEntries(WORK_REQUEST.fields.map((f) => [f.name, f.layout ?? { width: f.width, ...(f.doc && { doc: f.doc }) }]));
  const WRQ_ENTRY = record('wrq_entry', { ...kept, phase: { width: Math.log2(W), doc: 'the data address modulo W' } } as Record<string, FieldDef>);
  const { addr: _portAddr, ...entryPorts } = wrPorts;
  const entryIn = WRQ_ENTRY.pack({ ...(entryPorts as Record<string, Expr>), phase: port.addr.slice(Math.log2(W) - 1, 0) });
  const take = m.let('wr_take', port.valid.and(port.ready), { doc: 'a work request is taken (into the queue, or straight in)' });
  const bypass = m.wire('wr_bypass', 1);
  const pop = m.wire('wrq_pop', 1);
  const wrq = bramFifo(m, 'wrq', WRQ_ENTRY.width, ddpTxWrQueue(W), { push: take.and(bypass.not()), data: entryIn, pop });
  // The request being started: the queue's head, or, with the queue empty, the port's.
  const cur = WRQ_ENTRY.view(m.let('cur_entry', mux(wrq.headValid, wrq.head, entryIn), { record: WRQ_ENTRY }), { m, prefix: 'cur' });
  const field = (name: string): Expr => (cur as unknown as Record<string, Expr>)[name]!;
  const wrKind = field('kind');
  const wrSolicited = field('solicited');
  const wrInvalidate = field('invalidate');
  const wrStag = field('stag');
  const wrTo = field('to');
  const wrLen = field('len');
  const wrSinkStag = field('sink_stag');
  const wrSinkTo = field('sink_to');
  const wrImm = field('imm');
  const wrAopcode = field('aopcode');
  const wrAddSwap = field('add_swap');
  const wrAddSwapMask = field('add_swap_mask');
  const wrCompare = field('compare');
  const wrCompareMask = field('compare_mask');
  const wrRequestId = field('request_id');

  const rd = readPort(m, W);

  const o = sourceStream({ bytes: W, user: ULPDU_LEFT_BITS }).declare(m, 'm_axis', 'AXI4-Stream output: ULPDUs to mpa_tx (m_axis); tuser = octets of the ULPDU from this beat on');
  const sg = 'Status';
  const sentValid = m.output('m_sent_valid', 1, { group: sg, doc: "the last beat of a work request's last ULPDU is taken this cycle" });
  const idle = m.output('idle', 1, { group: sg, doc: 'no work request in progress and nothing left to send' });

  const K = rnicNames(m);
  const kWrite = K.WR.WRITE;
  const kSend = K.WR.SEND;

  const fsm = stateMachine(m, 'state', STATES, { reset: 'IDLE', meaning: MEANING });
  const inIdle = m.let('in_idle', fsm.is('IDLE'));
  const inData = m.let('in_data', fsm.is('DATA'));
  const inShort = m.let('in_short', fsm.is('SHORT'));
  // An empty queue and an idle sender: the request starts in the cycle it is taken.
  m.assign(bypass, take.and(inIdle).and(wrq.empty));
  m.assign(pop, wrq.headValid.and(inIdle));
  const wrFire = m.let('wr_fire', pop.or(bypass), { doc: 'a work request starts' });

  // MSN counters of QN 0 (Send, Immediate) and QN 1 (Read Request, Atomic Request).
  const msnSend = m.reg('msn_send', 32, { doc: 'MSN of the next message on QN 0' });
  const msnRead = m.reg('msn_read', 32, { doc: 'MSN of the next message on QN 1' });

  const out = outputRegister(m, o, W, { overlayLanes: segmentOverlayLanes(W, true), flag: true });

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
    untagged,
    request: { phase: field('phase'), size: wrLen },
    // Writes and Sends are read as they enter the queue.
    fetch: { valid: take.and(port.kind.eq(kWrite).or(port.kind.eq(kSend))), addr: port.addr, size: port.len, queue: ddpTxWrQueue(W) + 1 },
    fetchGate: lit(1, 1),
    rd,
    sharedRead: null,
    header: (last, stag, to) => segmentHeader({ tagged: untagged.not(), last, opcode, stag, to, msn: msnSend }),
  });
  // Send (3), with Invalidate (4), with SE (5), with SE and Invalidate (6): RFC 5040 §4.3.
  const sendOpcode = mux(
    wrInvalidate,
    mux(wrSolicited, K.OP.SEND_SE_INVALIDATE, K.OP.SEND_INVALIDATE),
    mux(wrSolicited, K.OP.SEND_SE, K.OP.SEND),
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

  m.assign(port.ready, wrq.full.not());
  // The output beat's flag: it ends a work request's last ULPDU.
  m.assign(sentValid, o.valid.and(o.ready).and(out.flag));
  m.assign(idle, inIdle.and(out.busy.not()).and(wrq.headValid.not()));

  out.connect([
    { ...seg.beat, flag: seg.beat.last.and(seg.last) },
    { ...short.beat, flag: short.beat.last.and(atomicSplit.not()) },
  ]);

  m.sync(() => {
    m.when(rst, () => {
      m.set(msnSend, cfgInitialMsn);
      m.set(msnRead, cfgInitialMsn);
    });

    m.when(wrFire, () =>
      m.switch(wrKind, [
        [
          [K.WR.WRITE, K.WR.SEND],
          () => {
            fsm.goto('DATA');
            m.set(opcode, mux(untagged, sendOpcode, K.OP.WRITE));
            m.set(untaggedReg, untagged);
            // A Send's RsvdULP2 carries the STag to invalidate, else 0; its MO counts from 0.
            seg.start(mux(untagged.and(wrInvalidate.not()), lit(32, 0), wrStag), mux(untagged, lit(64, 0), wrTo));
          },
        ],
        [
          K.WR.READ,
          () => {
            fsm.goto('SHORT');
            short.load(readRequest, sizeOf(readRequest));
            m.set(msnRead, msnRead.add(1));
          },
        ],
        [
          K.WR.IMMEDIATE,
          () => {
            fsm.goto('SHORT');
            short.load(immediate, sizeOf(immediate));
            m.set(msnSend, msnSend.add(1));
          },
        ],
        [
          K.WR.ATOMIC,
          () => {
            fsm.goto('SHORT');
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
      fsm.goto('IDLE');
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
        () => fsm.goto('IDLE'),
      ),
    );
  });
  return m.build();
}
