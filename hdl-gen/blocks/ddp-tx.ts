import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { ATOMIC_REQUEST_HEADER_SIZE } from '../../ts-model/rdmap/constants';
import { type Expr, cat, lit, mux } from '../core/expr';
import { ModuleBuilder, type Module } from '../core/module';
import { sourceStream } from '../core/stream';
import { ULPDU_LEFT_BITS, fixedUlpduShifter, outputRegister } from './ddp-tx-output';
import { readPort, segmentOverlayLanes, segmentStart, segmentStartLayout, segmenter } from './ddp-tx-segmenter';
import { ATOMIC_TAIL_MAX, atomicRequestTail, atomicRequestUlpdu, immediateUlpdu, readRequestUlpdu, segmentHeader } from './ddp-tx-ulpdu';
import { bramFifo } from '../lib/fifo-bram';
import { fifo } from '../lib/fifo';
import { indexBits } from '../lib/ram';
import { DDP_TX_RING, QP_MTU, splitMulpdu, txScheduler, type TxScheduler } from './ddp-tx-sched';
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
 *
 * Shared by N QPs (`ddpTxModule(W, { qps: N })`, ddp_tx_w<W>_q<N>): the work requests of every QP
 * come in on the one port with wr_qp and wait in per-QP rings in RAM; a round-robin scheduler
 * over the QPs with work (ddp-tx-sched.ts, its header states the contract: input FIFO, ring
 * full, cfg, holds and releases, hazards) hands them one work request at a time to the send
 * queue above, each with its QP, its MSN (taken from its QP's QN 0 or QN 1 counter
 * when it entered the ring) and its QP's MULPDU, so the fetcher, segmenter and output stages run
 * unchanged; a message is never interleaved with another (QPs switch at work request boundaries).
 * cfg_valid / cfg_qp / cfg_mulpdu / cfg_initial_msn / cfg_hold load a QP (cfg_ready: after rst the
 * N contexts are cleared, N cycles; then 0 only in the cycle after a release); rst no longer loads
 * the MSNs. A QP loaded with cfg_hold (MPA fencing, RFC 6581 §3) is skipped by the scheduler, its
 * work requests kept in its ring, until release_valid with release_qp lifts the hold (one taken
 * every cycle). m_axis_tid and m_sent_qp name the QP; idle is 1 with nothing in progress but the
 * work requests of held QPs.
 * Cycles: a work request's first read is 8 cycles after its handshake on an idle block (1 with
 * one QP: the input FIFO, the ring, the scheduler FIFO, the ring read: 7 more), and it starts
 * from the send queue's head two cycles after its first read (no start in the cycle it is
 * handed over: the starting request is a register, which keeps the segmenter's start paths one
 * mux shorter); the data comes later than that whenever the read latency is 2 or more. Between
 * work requests, of the same QP or not, the same one cycle as with one QP while the send queue
 * holds work (the scheduler serves one every other cycle or faster): 4 KiB Writes alternating
 * between QPs leave at 62 payload octets per cycle at W = 64, as from one QP. The QP of the beat
 * on m_axis comes from a FIFO of the QPs of the messages started and not yet sent (TID_QUEUE).
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

/** Most QPs one ddp_tx_w<W>_q<N> serves (the QP index is at most 16 bits). */
export const DDP_TX_MAX_QPS = 1 << 16;

export interface DdpTxOptions {
  /** QPs sharing the block (default 1: today's ports, no wr_qp, no tid, no scheduler). */
  readonly qps?: number;
}

/** The module name: `ddp_tx_w<W>`, shared by N > 1 QPs `ddp_tx_w<W>_q<N>`. */
export const ddpTxName = (bytes: number, qps = 1): string => `ddp_tx_w${bytes}${qps > 1 ? `_q${qps}` : ''}`;

/**
 * Messages fired and not yet sent whole (the one being sent, those with beats in the two output
 * stages, the skid buffer's two): the depth of the FIFO of their QPs that names m_axis_tid.
 */
const TID_QUEUE = 8;

export function ddpTxModule(bytes: number, opts: DdpTxOptions = {}): Module {
  checkRnicWidth('ddp_tx', bytes);
  const W = bytes;
  const qps = opts.qps ?? 1;
  if (!Number.isInteger(qps) || qps < 1 || qps > DDP_TX_MAX_QPS) throw new RangeError(`ddp_tx is shared by 1 to ${DDP_TX_MAX_QPS} QPs, got ${qps}`);
  const shared = qps > 1;
  const qb = shared ? indexBits(qps) : 0;
  const m = new ModuleBuilder(
    ddpTxName(W, qps),
    'RDMAP requester transmit: work requests to ULPDUs, one per m_axis packet: RDMA Writes and\n' +
      'Sends (data read from host memory, segmented to MULPDU, RFC 5040 section 4.3, RFC 5041\n' +
      'section 5.2), RDMA Read Requests (RFC 5040 section 4.4), Immediate Data and Atomic Requests\n' +
      `(RFC 7306 sections 6, 5.2.1). ${W} octets per beat; a Write or Send at one output beat per cycle.` +
      (shared ? `\nShared by ${qps} QPs: per-QP work request rings, MSNs and MULPDU in RAM; a round-robin scheduler over the QPs with work; tid names the QP.` : ''),
    { bytes: W, fifo_depth: DDP_TX_FIFO_DEPTH, wr_queue: ddpTxWrQueue(W), ...(shared && { qps, ring: DDP_TX_RING }) },
  );
  const clkGroup = 'Clock and synchronous active-high reset';
  const clk = m.input('clk', 1, { group: clkGroup });
  const rst = m.input('rst', 1, { group: clkGroup });
  m.clockDomain('sync', clk, rst);

  const cg = 'Configuration';
  const cfgShared = shared
    ? {
        valid: m.input('cfg_valid', 1, { group: cg, doc: "load cfg_qp's context (taken while cfg_ready)" }),
        ready: m.output('cfg_ready', 1, { group: cg, doc: 'low while the contexts are cleared after rst (N cycles) and in the cycle after a release' }),
        qp: m.input('cfg_qp', qb, { group: cg }),
        hold: m.input('cfg_hold', 1, { group: cg, doc: "cfg_qp is held: its work requests wait (MPA fencing, RFC 6581 section 3) until its release" }),
      }
    : null;
  const cfgMulpdu = m.input('cfg_mulpdu', 16, { group: cg, doc: 'largest ULPDU (>= 64): segments carry at most cfg_mulpdu - 14 (Write) or - 18 (Send) octets' });
  const cfgInitialMsn = m.input('cfg_initial_msn', 32, { group: cg, doc: shared ? 'first MSN of QN 0 and QN 1 of cfg_qp' : 'first MSN of QN 0 and QN 1, loaded while rst is high' });

  const wg = 'Work request (one per message, in send order)';
  const wrGroup = portGroup(m, 'wr', WORK_REQUEST, 'input', wg);
  const wrPorts = wrGroup.ports;
  const port = {
    valid: m.input('wr_valid', 1, { group: wg }),
    ready: m.output('wr_ready', 1, { group: wg, doc: shared ? 'the shared input FIFO has room' : 'the work request queue has room' }),
    ...wrPorts,
  };
  const wrQp = shared ? m.input('wr_qp', qb, { group: wg, doc: 'the QP of the work request' }) : null;
  // The work request queue: a request is taken as soon as there is room, so the fetcher can read
  // the data of the Writes and Sends behind the one being sent.
  // A queue entry is the work request but for its address: the fetcher has it; the sender needs
  // only its phase in the beat (the realignment).
  const { addr: _addr, ...kept } = Object.fromEntries(WORK_REQUEST.fields.map((f) => [f.name, f.layout ?? { width: f.width, ...(f.doc && { doc: f.doc }) }]));
  // Shared, the entry also carries its first segment's first beat (segmentStart), planned from
  // its size, phase and its QP's MULPDU as it enters the queue: the start loads registers.
  const START = segmentStartLayout(W);
  const perQp: Record<string, FieldDef> = shared
    ? {
        qp: { width: qb, doc: 'the QP' },
        msn: { width: 32, doc: 'its MSN (QN 0 or QN 1 by kind)' },
        mtu: QP_MTU,
        first: { width: START.width, doc: "a Write's or Send's first beat (segmentStart)" },
      }
    : {};
  const WRQ_ENTRY = record('wrq_entry', { ...kept, phase: { width: Math.log2(W), doc: 'the data address modulo W' }, ...perQp } as Record<string, FieldDef>);
  // Shared by QPs: the work requests come from the scheduler (ddp-tx-sched.ts), which hands one
  // only when the queue has room for it (credits returned as requests start).
  const startedW = shared ? m.wire('wr_started', 1, { doc: 'a work request starts (a scheduler credit returns)' }) : null;
  // The code points are declared when first read: shared, the scheduler reads some first.
  const sharedNames = shared ? rnicNames(m) : null;
  const sched: TxScheduler | null = shared
    ? txScheduler(m, {
        qps,
        names: sharedNames!,
        credits: ddpTxWrQueue(W) + 1,
        started: startedW!,
        wr: { valid: port.valid, ready: port.ready, qp: wrQp!, value: wrGroup.value },
        cfg: { valid: cfgShared!.valid, ready: cfgShared!.ready, qp: cfgShared!.qp, mulpdu: cfgMulpdu, initialMsn: cfgInitialMsn, hold: cfgShared!.hold },
        release: {
          valid: m.input('release_valid', 1, { group: 'Release', doc: "lift release_qp's hold (taken every cycle; dropped if a cfg of the same QP is taken in the cycle)" }),
          qp: m.input('release_qp', qb, { group: 'Release' }),
        },
      })
    : null;
  const src = sched ? { ...(sched.wr as unknown as Record<string, Expr>) } : (wrPorts as unknown as Record<string, Expr>);
  const { addr: srcAddr, ...entryFields } = src;
  const srcKind = src['kind']!;
  const srcLen = src['len']!;
  const firstIn = (mtu: Expr): Expr => {
    const v = QP_MTU.view(mtu);
    const untagged = srcKind.ne(sharedNames!.WR.WRITE);
    return segmentStart(W, untagged, srcLen, srcAddr!.slice(Math.log2(W) - 1, 0), { mulpdu: v.mulpdu, rooms: [v.room_tagged, v.room_untagged] });
  };
  const entryIn = WRQ_ENTRY.pack({
    ...Object.fromEntries(WORK_REQUEST.fields.filter((f) => f.name !== 'addr').map((f) => [f.name, entryFields[f.name]!])),
    phase: srcAddr!.slice(Math.log2(W) - 1, 0),
    ...(sched && { qp: sched.qp, msn: sched.msn, mtu: sched.mtu, first: firstIn(sched.mtu) }),
  });
  const take = sched
    ? m.let('wr_take', sched.valid, { doc: 'the scheduler hands a work request (into the queue)' })
    : m.let('wr_take', port.valid.and(port.ready), { doc: 'a work request is taken (into the queue, or straight in)' });
  // Shared, every request goes through the queue (no start in the cycle it is handed over): the
  // request that starts is the queue's head register alone, one mux less before the segmenter.
  const bypass = shared ? null : m.wire('wr_bypass', 1);
  const pop = m.wire('wrq_pop', 1);
  const wrq = bramFifo(m, 'wrq', WRQ_ENTRY.width, ddpTxWrQueue(W), { push: bypass ? take.and(bypass.not()) : take, data: entryIn, pop });
  // The request being started: the queue's head, or, with the queue empty, the port's.
  const cur = WRQ_ENTRY.view(bypass ? m.let('cur_entry', mux(wrq.headValid, wrq.head, entryIn), { record: WRQ_ENTRY }) : wrq.head, { m, prefix: 'cur' });
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

  const o = sourceStream({ bytes: W, user: ULPDU_LEFT_BITS, id: qb }).declare(
    m,
    'm_axis',
    `AXI4-Stream output: ULPDUs to mpa_tx (m_axis); tuser = octets of the ULPDU from this beat on${shared ? '; tid = the QP' : ''}`,
  );
  const sg = 'Status';
  const sentValid = m.output('m_sent_valid', 1, { group: sg, doc: "the last beat of a work request's last ULPDU is taken this cycle" });
  const sentQp = shared ? m.output('m_sent_qp', qb, { group: sg, doc: 'the QP of that work request' }) : null;
  const idle = m.output('idle', 1, { group: sg, doc: shared ? 'no work request in progress and nothing left to send, but those of held QPs' : 'no work request in progress and nothing left to send' });

  const K = sharedNames ?? rnicNames(m);
  const kWrite = K.WR.WRITE;
  const kSend = K.WR.SEND;

  const fsm = stateMachine(m, 'state', STATES, { reset: 'IDLE', meaning: MEANING });
  const inIdle = m.let('in_idle', fsm.is('IDLE'));
  const inData = m.let('in_data', fsm.is('DATA'));
  const inShort = m.let('in_short', fsm.is('SHORT'));
  // An empty queue and an idle sender: the request starts in the cycle it is taken.
  if (bypass) m.assign(bypass, take.and(inIdle).and(wrq.empty));
  m.assign(pop, wrq.headValid.and(inIdle));
  const wrFire = m.let('wr_fire', bypass ? pop.or(bypass) : pop, { doc: 'a work request starts' });
  if (startedW) m.assign(startedW, wrFire);

  // One QP: MSN counters of QN 0 (Send, Immediate) and QN 1 (Read Request, Atomic Request).
  // Shared: each work request carries its MSN from its QP's counters (taken at enqueue); the
  // message's is registered for the headers built after the start (Send segments, the Atomic's tail).
  const msnSend = shared ? null : m.reg('msn_send', 32, { doc: 'MSN of the next message on QN 0' });
  const msnRead = shared ? null : m.reg('msn_read', 32, { doc: 'MSN of the next message on QN 1' });
  const msgMsn = shared ? m.reg('msg_msn', 32, { doc: 'MSN of the message being sent' }) : null;
  const msgMulpdu = shared ? m.reg('msg_mulpdu', 16, { doc: "MULPDU of the message's QP" }) : null;
  const msnAtStart = { qn0: msnSend ?? field('msn'), qn1: msnRead ?? field('msn') };
  const msnLater = { qn0: msnSend ?? msgMsn!, qn1: msnRead ?? msgMsn! };
  // The MULPDU: the port's, or the QP's: the starting request's sizes its first segment (with
  // the rooms and the Atomic's split computed at cfg), the message's register the rest.
  const startMtu = shared ? QP_MTU.view(field('mtu'), { m, prefix: 'cur_mtu' }) : null;
  const startTailSel = startMtu ? startMtu.tail_sel : null;
  const startAtomicLen = startMtu ? startMtu.atomic_len : null;
  const mulpdu = msgMulpdu ?? cfgMulpdu;

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
    cfgMulpdu: mulpdu,
    ...(startMtu && { startMulpdu: { mulpdu: startMtu.mulpdu, rooms: [startMtu.room_tagged, startMtu.room_untagged] } }),
    untagged,
    request: { phase: field('phase'), size: wrLen, ...(shared && { first: START.view(field('first'), { m, prefix: 'cur_first' }) }) },
    // Writes and Sends are read as they enter the queue.
    fetch: { valid: take.and(srcKind.eq(kWrite).or(srcKind.eq(kSend))), addr: srcAddr!, size: srcLen, queue: ddpTxWrQueue(W) + 1 },
    fetchGate: lit(1, 1),
    // Shared, the 64-bit TO add was the longest carry chain between registers (synth_xilinx).
    toCarrySelect: shared,
    rd,
    sharedRead: null,
    header: (last, stag, to) => segmentHeader({ tagged: untagged.not(), last, opcode, stag, to, msn: msnLater.qn0 }),
  });
  // Send (3), with Invalidate (4), with SE (5), with SE and Invalidate (6): RFC 5040 §4.3.
  const sendOpcode = mux(
    wrInvalidate,
    mux(wrSolicited, K.OP.SEND_SE_INVALIDATE, K.OP.SEND_INVALIDATE),
    mux(wrSolicited, K.OP.SEND_SE, K.OP.SEND),
  );

  // ---- Read Request, Immediate Data, Atomic Request: the shift register -----------------------
  const short = fixedUlpduShifter(m, { W, maxOctets: FIXED_ULPDU_MAX, active: inShort, outFree: out.free });
  const readRequest = readRequestUlpdu(msnAtStart.qn1, { sinkStag: wrSinkStag, sinkTo: wrSinkTo, size: wrLen, srcStag: wrStag, srcTo: wrTo });
  const immediate = immediateUlpdu(msnAtStart.qn0, wrSolicited, wrImm);
  // Below MULPDU 70 the Atomic Request is two segments (segmentMessage): the first MULPDU octets,
  // then the rest of Compare Mask from atomic_tail.
  const atomicSplit = m.reg('atomic_split', 1, { reset: 0, doc: "an Atomic Request's second segment is still to send" });
  const atomicTail = shared ? null : m.reg('atomic_tail', 8 * ATOMIC_TAIL_MAX, { doc: 'its payload: the low octets of Compare Mask' });
  const split = m.let('atomic_needs_split', startMtu ? startMtu.atomic_split : cfgMulpdu.lt(UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE));
  const atomic = atomicRequestUlpdu(msnAtStart.qn1, split.not(), {
    aopcode: wrAopcode,
    requestId: wrRequestId,
    stag: wrStag,
    to: wrTo,
    addSwap: wrAddSwap,
    addSwapMask: wrAddSwapMask,
    compare: wrCompare,
    compareMask: wrCompareMask,
  });
  // Shared: the second segment is built when the Atomic Request starts, from the starting request
  // (its MSN, Compare Mask and tail_sel, MULPDU − 64 set at cfg: its octets are functions of three
  // bits, not of a MULPDU subtraction and compares), and registered until it is loaded.
  const tailNow = startTailSel
    ? atomicRequestTail(field('msn'), splitMulpdu(startTailSel), wrCompareMask.slice(8 * ATOMIC_TAIL_MAX - 1, 0))
    : atomicRequestTail(msnLater.qn1, mulpdu, atomicTail!);
  const tailReg = shared
    ? {
        octets: tailNow.octets.map((_, i) => m.reg(`atomic_tail_octet${i}`, 8)),
        length: m.reg('atomic_tail_len', 7, { doc: 'length of the second segment' }),
        // Its lane mask too, so loading it is a mux of registers, no compare of the length.
        keep: m.reg('atomic_tail_keep', short.keepOf(tailNow.length).width, { doc: 'the lanes of the second segment' }),
      }
    : null;
  const tail = tailReg ?? tailNow;
  const sizeOf = (octets: readonly unknown[]) => lit(7, octets.length);

  if (!shared) m.assign(port.ready, wrq.full.not());
  // The output beat's flag: it ends a work request's last ULPDU.
  m.assign(sentValid, o.valid.and(o.ready).and(out.flag));
  if (shared) {
    // The QPs of the messages started and not yet sent whole, oldest first: the head names the
    // beat on m_axis (the messages leave in the order they start). Kinds 5..7 send nothing.
    const sends = m.let('wr_fire_sends', wrFire.and(wrKind.le(K.WR.ATOMIC)), { doc: 'the work request starting sends a ULPDU' });
    const tids = fifo(m, 'tid_q', qb, TID_QUEUE, { push: sends, data: field('qp'), pop: sentValid });
    m.assign(o.id!, tids.head);
    m.assign(sentQp!, tids.head);
  }
  // Shared, a request may sit in the queue's memory a cycle before its head register: empty, not head_valid.
  m.assign(idle, shared ? inIdle.and(out.busy.not()).and(wrq.empty).and(sched!.idle) : inIdle.and(out.busy.not()).and(wrq.headValid.not()));

  out.connect([
    { ...seg.beat, flag: seg.beat.last.and(seg.last) },
    { ...short.beat, flag: short.beat.last.and(atomicSplit.not()) },
  ]);

  m.sync(() => {
    if (msnSend && msnRead)
      m.when(rst, () => {
        m.set(msnSend, cfgInitialMsn);
        m.set(msnRead, cfgInitialMsn);
      });
    if (tailReg)
      m.when(wrFire, () => {
        tailReg.octets.forEach((r, i) => m.set(r, tailNow.octets[i]!));
        m.set(tailReg.length, tailNow.length);
        m.set(tailReg.keep, short.keepOf(tailNow.length));
      });
    if (msgMsn && msgMulpdu && startMtu)
      m.when(wrFire, () => {
        m.set(msgMsn, field('msn'));
        m.set(msgMulpdu, startMtu.mulpdu);
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
            if (msnRead) m.set(msnRead, msnRead.add(1));
          },
        ],
        [
          K.WR.IMMEDIATE,
          () => {
            fsm.goto('SHORT');
            short.load(immediate, sizeOf(immediate));
            if (msnSend) m.set(msnSend, msnSend.add(1));
          },
        ],
        [
          K.WR.ATOMIC,
          () => {
            fsm.goto('SHORT');
            short.load(atomic, startAtomicLen ?? mux(split, cfgMulpdu.slice(6, 0), sizeOf(atomic)));
            m.set(atomicSplit, split);
            if (atomicTail) m.set(atomicTail, wrCompareMask.slice(8 * ATOMIC_TAIL_MAX - 1, 0));
            if (msnRead) m.when(split.not(), () => m.set(msnRead, msnRead.add(1)));
          },
        ],
      ]),
    );

    // A Send's MSN moves on once its last segment is built (its headers read msn_send).
    seg.sync(() => {
      fsm.goto('IDLE');
      if (msnSend) m.when(untaggedReg, () => m.set(msnSend, msnSend.add(1)));
    });
    short.sync(() =>
      m.when(
        atomicSplit,
        () => {
          short.load(tail.octets, tail.length, tailReg?.keep);
          m.set(atomicSplit, 0);
          if (msnRead) m.set(msnRead, msnRead.add(1));
        },
        () => fsm.goto('IDLE'),
      ),
    );
  });
  return m.build();
}
