import { DDP_VERSION, FIRST_MSN, Qn, UNTAGGED_HEADER_SIZE } from '../ddp/constants';
import { headerSize, writeDdpHeader, type TaggedHeader, type UntaggedHeader } from '../ddp/header';
import { segmentMessage, type DdpMessage } from '../ddp/segmenter';
import { IRD_ORD_NO_NEGOTIATE } from '../mpa/constants';
import { AOpCode, cmpSwap, fetchAdd, isAligned64, u64ToBytes } from '../rdmap/atomics';
import {
  IMMEDIATE_DATA_SIZE,
  Opcode,
  READ_REQUEST_HEADER_SIZE,
  isInvalidateOpcode,
  isSendOpcode,
  isSolicitedOpcode,
  rdmapControl,
} from '../rdmap/constants';
import {
  decodeAtomicRequest,
  decodeAtomicResponse,
  decodeReadRequest,
  decodeTerminate,
  encodeAtomicRequest,
  encodeAtomicResponse,
  encodeReadRequest,
  encodeTerminate,
  type AtomicRequestFields,
  type ReadRequestFields,
} from '../rdmap/headers';
import { DdpError, LlpError, RdmapError, formatErrorCode, llpError, type ErrorCode } from '../terminate-codes';
import type { CompletionKind, CompletionStatus, RnicEvent, Side } from './events';
import { checkHeader, ddpTaggedError, rdmapProtectionError, type CheckedSegment } from './header-checks';
import type { Rnic } from './rnic';
import { needsRfc7306, type RtrKind, type WorkRequest } from './work-request';
import { hex } from '../util/hex';

/** A ULPDU ready for MPA, with what it belongs to. */
export interface OutboundUlpdu {
  readonly ulpdu: Uint8Array;
  readonly opcode: number;
  /** The work request (scenario op) it carries, or null for responses, Terminates and RTRs. */
  readonly op: number | null;
  /** Called once MPA has framed it (DDP finished with it, RFC 5040 §5.5 rule 10). */
  readonly onSent?: () => void;
}

export interface EndpointConfig {
  readonly side: Side;
  readonly rnic: Rnic;
  /** Protection domain of this stream (RFC 5042 §5.1). */
  readonly pd: number;
  /** Largest ULPDU MPA accepts (spec/mpa.md §5). */
  readonly mulpdu: number;
  /** In force after MPA negotiation; 0x3FFF (do not negotiate) means unlimited. */
  readonly ird: number;
  readonly ord: number;
  readonly emit: (e: RnicEvent) => void;
  /** First MSN of every queue, both ways (RFC 5041 §5.1: 1); another value resumes a QP context. */
  readonly initialMsn?: number;
}

/** An outstanding Read or Atomic at the requester, matched FIFO by the responses (spec/ddp-rdmap.md §7). */
interface OrqEntry {
  readonly kind: 'read' | 'atomic';
  readonly wr: WorkRequest | null;
  readonly sinkStag: number;
  readonly sinkTo: bigint;
  readonly size: number;
  received: number;
  readonly requestId: number;
  /** The RFC 6581 RTR Read: sent whatever the credits, completed as 'rtr'. */
  readonly rtr: boolean;
}

/** An inbound Read or Atomic Request waiting for its response (the IRRQ, QN 1). */
type IrrqEntry =
  | { readonly kind: 'read'; readonly req: ReadRequestFields; readonly address: bigint; readonly op: number | null }
  | { readonly kind: 'atomic'; readonly req: AtomicRequestFields; readonly address: bigint; readonly op: number | null };

interface RecvBuffer {
  readonly address: bigint;
  readonly length: number;
}

/** The untagged message being received on one QN (spec/ddp-rdmap.md §6.3). */
interface UntaggedContext {
  readonly opcode: number;
  readonly msn: number;
  placed: number;
  readonly buffer: RecvBuffer | null;
}

interface TaggedContext {
  readonly opcode: number;
  readonly stag: number;
  nextTo: bigint;
}

/** Send-queue completions are reported in submission order (RFC 5040 §5.5 rule 10). */
interface CompletionSlot {
  readonly op: number | null;
  readonly kind: CompletionKind;
  event: RnicEvent | null;
}

const unlimited = (n: number): number => (n === IRD_ORD_NO_NEGOTIATE ? Infinity : n);

/** The untagged queue an opcode uses [RFC 5040 §4.3; RFC 7306 §10.2]. */
function queueOf(opcode: number): number {
  switch (opcode) {
    case Opcode.READ_REQUEST:
    case Opcode.ATOMIC_REQUEST:
      return Qn.READ_REQUEST;
    case Opcode.TERMINATE:
      return Qn.TERMINATE;
    case Opcode.ATOMIC_RESPONSE:
      return Qn.ATOMIC_RESPONSE;
    default:
      return Qn.SEND;
  }
}

/**
 * One end of an RDMAP stream (a QP) on an RNIC: RDMAP over DDP (RFC 5040, RFC 5041, RFC 7306).
 * Transmit turns work requests into DDP segments (ULPDUs); receive runs every check of
 * spec/ddp-rdmap.md §5 in order, places data, completes work, answers Reads and Atomics, and on
 * the first error sends one Terminate and drops everything after it (§5.6, §8).
 */
export class RdmapEndpoint {
  readonly side: Side;
  private readonly rnic: Rnic;
  private readonly cfg: EndpointConfig;

  // Transmit.
  private readonly tx: OutboundUlpdu[] = [];
  private readonly txMsn: number[];
  private readonly waitingForCredit: WorkRequest[] = [];
  private readonly orq: OrqEntry[] = [];
  private readonly slots: CompletionSlot[] = [];
  private nextRequestId = 1;

  // Receive.
  private readonly rxMsn: number[];
  private readonly openUntagged = new Map<number, UntaggedContext>();
  private openTagged: TaggedContext | null = null;
  private readonly receives: RecvBuffer[] = [];
  private readonly irrq: IrrqEntry[] = [];

  private rxStopped = false;
  private txStopped = false;
  private terminateSent = false;
  /** FPDUs received so far (MPA fencing: a responder sends nothing before the first one). */
  received = 0;

  constructor(cfg: EndpointConfig) {
    this.cfg = cfg;
    this.side = cfg.side;
    this.rnic = cfg.rnic;
    const first = (cfg.initialMsn ?? FIRST_MSN) >>> 0;
    this.txMsn = [first, first, first, first];
    this.rxMsn = [first, first, first, first];
  }

  get stopped(): boolean {
    return this.txStopped && this.rxStopped;
  }

  get terminated(): boolean {
    return this.terminateSent;
  }

  /** Posts a receive buffer of `length` octets on QN 0 and returns its host address. */
  postReceive(length: number): bigint {
    const address = this.rnic.allocate(length);
    this.receives.push({ address, length });
    return address;
  }

  /** Removes the oldest posted receive buffer (fault injection: no buffer for the next Send). */
  withdrawReceive(): boolean {
    return this.receives.shift() !== undefined;
  }

  get postedReceives(): number {
    return this.receives.length;
  }

  /** Anything to transmit: queued ULPDUs or requests to answer. */
  get hasOutput(): boolean {
    // A stopped endpoint still owes the peer its queued Terminate.
    return this.tx.length > 0 || (!this.txStopped && this.irrq.length > 0);
  }

  /** The ULPDUs to hand to MPA now, in order; answers queued Reads and Atomics first. */
  pull(): OutboundUlpdu[] {
    if (this.txStopped) {
      // Only a Terminate queued before stopping still goes out.
      return this.tx.splice(0);
    }
    this.answerRequests();
    return this.tx.splice(0);
  }

  // ---------------------------------------------------------------------------------------------
  // Transmit: work requests → DDP messages [RFC 5040 §5; RFC 7306 §5, §6]

  post(wr: WorkRequest): void {
    // Refused before anything is queued: the ULP of an RNIC without RFC 7306 has no such verb.
    if (needsRfc7306(wr) && !this.rnic.options.rfc7306) {
      throw new RangeError(
        `work request ${wr.id} (${wr.kind}) needs RFC 7306, which the ${this.side} RNIC has off (options.rdmap.rfc7306 false): without it there are no Immediate Data or Atomic operations`,
      );
    }
    const kind: CompletionKind = wr.kind;
    const slot: CompletionSlot = { op: wr.id, kind, event: null };
    this.slots.push(slot);
    if (this.txStopped) {
      this.finish(slot, 'flushed', 0);
      return;
    }
    switch (wr.kind) {
      case 'write':
        this.queueMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: wr.stag, to: wr.to, payload: wr.data }, Opcode.WRITE, wr.id, () =>
          this.finish(slot, 'success', wr.data.length),
        );
        return;
      case 'send': {
        const opcode =
          wr.invalidate === null
            ? wr.solicited
              ? Opcode.SEND_SE
              : Opcode.SEND
            : wr.solicited
              ? Opcode.SEND_SE_INVALIDATE
              : Opcode.SEND_INVALIDATE;
        this.queueUntagged(opcode, Qn.SEND, wr.invalidate ?? 0, wr.data, wr.id, () => this.finish(slot, 'success', wr.data.length));
        return;
      }
      case 'immediate':
        this.queueUntagged(wr.solicited ? Opcode.IMMEDIATE_SE : Opcode.IMMEDIATE, Qn.SEND, 0, wr.data, wr.id, () =>
          this.finish(slot, 'success', wr.data.length),
        );
        return;
      case 'read':
      case 'atomic':
        this.waitingForCredit.push(wr);
        this.issueCredited();
        return;
    }
  }

  /** The RFC 6581 RTR indication (spec/mpa.md §8.3): a zero-length Write, Send or Read. */
  postRtr(kind: RtrKind): void {
    const slot: CompletionSlot = { op: null, kind: 'rtr', event: null };
    this.slots.push(slot);
    const done = () => this.finish(slot, 'success', 0);
    // Chelsio rejects STag 0 on a zero-length RTR, though RFC 5041 says it is not checked: send 1.
    const rtrStag = 1;
    if (kind === 'write') {
      this.queueMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: rtrStag, to: 0n, payload: new Uint8Array(0) }, Opcode.WRITE, null, done);
    } else if (kind === 'send') {
      this.queueUntagged(Opcode.SEND, Qn.SEND, 0, new Uint8Array(0), null, done);
    } else {
      this.orq.push({ kind: 'read', wr: null, sinkStag: rtrStag, sinkTo: 0n, size: 0, received: 0, requestId: 0, rtr: true });
      const req: ReadRequestFields = { sinkStag: rtrStag, sinkTo: 0n, size: 0, srcStag: rtrStag, srcTo: 0n };
      this.queueUntagged(Opcode.READ_REQUEST, Qn.READ_REQUEST, 0, encodeReadRequest(req), null);
      // Completed when its zero-length Read Response arrives; the slot stays open until then.
      this.rtrSlot = slot;
    }
  }

  private rtrSlot: CompletionSlot | null = null;

  /** Reads and Atomics go out while ORD credits last; the rest wait (RFC 5040 §6.1). */
  private issueCredited(): void {
    while (this.waitingForCredit.length && !this.txStopped) {
      const wr = this.waitingForCredit[0]!;
      if (!this.hasCredit(wr.kind === 'atomic')) return;
      this.waitingForCredit.shift();
      if (wr.kind === 'read') {
        this.orq.push({ kind: 'read', wr, sinkStag: wr.localStag, sinkTo: wr.localTo, size: wr.length, received: 0, requestId: 0, rtr: false });
        const req: ReadRequestFields = { sinkStag: wr.localStag, sinkTo: wr.localTo, size: wr.length, srcStag: wr.stag, srcTo: wr.to };
        this.queueUntagged(Opcode.READ_REQUEST, Qn.READ_REQUEST, 0, encodeReadRequest(req), wr.id);
      } else if (wr.kind === 'atomic') {
        const requestId = this.nextRequestId;
        this.nextRequestId = (this.nextRequestId + 1) >>> 0;
        this.orq.push({ kind: 'atomic', wr, sinkStag: wr.localStag ?? 0, sinkTo: wr.localTo, size: 8, received: 0, requestId, rtr: false });
        const fields: AtomicRequestFields = {
          aopcode: wr.aopcode,
          requestId,
          stag: wr.stag,
          to: wr.to,
          addSwapData: wr.addSwapData,
          addSwapMask: wr.addSwapMask,
          compareData: wr.compareData,
          compareMask: wr.compareMask,
        };
        this.queueUntagged(Opcode.ATOMIC_REQUEST, Qn.READ_REQUEST, 0, encodeAtomicRequest(fields), wr.id);
      }
    }
  }

  private hasCredit(atomic: boolean): boolean {
    // The RTR Read is charged too: it takes one of the responder's IRD slots (RFC 6581 §9.1).
    const charged = this.orq;
    if (this.rnic.options.atomicCredits === 'shared') return charged.length < unlimited(this.cfg.ord);
    const same = charged.filter((e) => (e.kind === 'atomic') === atomic).length;
    return same < (atomic ? this.rnic.options.maxAtomics : unlimited(this.cfg.ord));
  }

  private queueUntagged(opcode: number, qn: number, rsvdUlp2: number, payload: Uint8Array, op: number | null, onSent?: () => void): void {
    const msn = this.txMsn[qn]!;
    this.txMsn[qn] = (msn + 1) >>> 0;
    this.queueMessage({ tagged: false, rsvdUlp: rdmapControl(opcode), rsvdUlp2, qn, msn, payload }, opcode, op, onSent);
  }

  private queueMessage(msg: DdpMessage, opcode: number, op: number | null, onSent?: () => void): void {
    const segments = segmentMessage(msg, this.cfg.mulpdu);
    segments.forEach((ulpdu, i) => this.tx.push({ ulpdu, opcode, op, ...(i === segments.length - 1 && onSent ? { onSent } : {}) }));
  }

  private finish(slot: CompletionSlot, status: CompletionStatus, length: number, extra: Partial<Extract<RnicEvent, { type: 'completion' }>> = {}): void {
    slot.event = { type: 'completion', side: this.side, kind: slot.kind, op: slot.op, status, length, ...extra };
    while (this.slots.length && this.slots[0]!.event) this.cfg.emit(this.slots.shift()!.event!);
  }

  /** Answers the IRRQ in arrival order: Read Responses and Atomic Responses (RFC 7306 §5.4 rule 8). */
  private answerRequests(): void {
    const { memory, options } = this.rnic;
    while (this.irrq.length) {
      const e = this.irrq.shift()!;
      if (e.kind === 'read') {
        const data = e.req.size ? memory.read(e.address, e.req.size) : new Uint8Array(0);
        this.queueMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: e.req.sinkStag, to: e.req.sinkTo, payload: data }, Opcode.READ_RESPONSE, e.op);
      } else {
        // The atomic unit: read, compute, write back, return the original (RFC 7306 §5.1).
        const orig = memory.readU64(e.address, options.hostMemoryEndian);
        const r = e.req;
        // A CmpSwap miss leaves the target untouched (RFC 7306 §5.1.2): no write, no placement.
        const swap = r.aopcode === AOpCode.CMP_SWAP ? cmpSwap(orig, r.compareData, r.compareMask, r.addSwapData, r.addSwapMask) : null;
        const value = r.aopcode === AOpCode.FETCH_ADD ? fetchAdd(orig, r.addSwapData, r.addSwapMask) : swap ? swap.value : r.addSwapData; // else draft-00 Swap
        if (!swap || swap.match) {
          memory.writeU64(e.address, value, options.hostMemoryEndian);
          this.cfg.emit({ type: 'placement', side: this.side, address: e.address, length: 8, stag: r.stag, op: e.op });
        }
        this.queueUntagged(Opcode.ATOMIC_RESPONSE, Qn.ATOMIC_RESPONSE, 0, encodeAtomicResponse({ requestId: r.requestId, value: orig }), e.op);
      }
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Receive [RFC 5041 §7.1; spec/ddp-rdmap.md §5]

  /** One ULPDU delivered by MPA; `op` is the peer's work request it belongs to (for reports). */
  receive(ulpdu: Uint8Array, op: number | null = null): void {
    this.received++;
    // §5.6: every segment after an error is silently dropped.
    if (this.rxStopped) return;
    const hc = checkHeader(ulpdu, this.rnic.options);
    if (!hc.ok) {
      this.fail(hc.error, hc.reason, ulpdu, hc.opcode, op);
      return;
    }
    const seg = hc.segment;
    if (this.injected) {
      const e = this.injected;
      this.injected = null;
      this.fail(e, 'local failure of this RNIC (injected)', ulpdu, seg.opcode, op);
      return;
    }
    if (seg.header.tagged) this.receiveTagged(seg, seg.header, op);
    else this.receiveUntagged(seg, seg.header, op);
  }

  private injected: ErrorCode | null = null;

  /** Fault injection: the next segment that arrives meets a local failure of this RNIC (e.g. 0x0/0x2/0x08). */
  injectFailure(error: ErrorCode): void {
    this.injected = error;
  }

  /**
   * The ULP tears the stream down: a Terminate with RDMAP Local Catastrophic and no copied headers,
   * since no incoming message caused it (spec/ddp-rdmap.md §8 rule 1).
   */
  abort(reason: string): void {
    if (this.terminateSent || this.txStopped) return;
    this.fail(RdmapError.LOCAL_CATASTROPHIC, reason, null, null, null);
  }

  /** MPA stopped the stream with an LLP error (spec/mpa.md §6): Terminate 0x2/0x0/code, no headers. */
  llpError(code: number, reason: string): void {
    // An FPDU that failed MPA's checks has still arrived: MPA fencing is open (spec/mpa.md §7.4).
    this.received++;
    if (this.rxStopped) return;
    if (code === LlpError.TCP_CLOSED.code) {
      // The connection is gone: a local report only, nothing can be sent.
      this.rxStopped = true;
      this.stopTransmit();
      this.cfg.emit({ type: 'closed', side: this.side, reason, error: LlpError.TCP_CLOSED });
      return;
    }
    this.fail(llpError(code), reason, null, null, null);
  }

  private receiveTagged(seg: CheckedSegment, h: TaggedHeader, op: number | null): void {
    const len = seg.payload.length;
    // H8: a continuation segment continues the open tagged message.
    const open = this.openTagged;
    if (open) {
      if (seg.opcode !== open.opcode) return this.reject(seg, op, RdmapError.UNEXPECTED_OPCODE, `opcode 0x${seg.opcode.toString(16)} inside an open tagged message of opcode 0x${open.opcode.toString(16)}`);
      if (h.stag !== open.stag) return this.reject(seg, op, DdpError.INVALID_STAG, `continuation STag 0x${h.stag.toString(16)} differs from 0x${open.stag.toString(16)}`);
      if (h.to !== open.nextTo) return this.reject(seg, op, DdpError.BASE_BOUNDS, `continuation TO ${h.to} is not ${open.nextTo}`);
    }
    // T1–T5, skipped for zero-length segments: STag and TO MUST NOT be checked [RFC 5041 §5.2].
    let address = 0n;
    if (len > 0) {
      const right = seg.opcode === Opcode.WRITE ? 'remote-write' : 'local-write';
      const c = this.rnic.stags.check(h.stag, h.to, len, this.cfg.pd, right);
      if (!c.ok) return this.reject(seg, op, ddpTaggedError(c.fault), `${c.fault} for STag 0x${h.stag.toString(16)} TO ${h.to} length ${len}`);
      address = c.address;
    }
    let read: OrqEntry | null = null;
    if (seg.opcode === Opcode.READ_RESPONSE) {
      // T6: an RDMA Read is outstanding (at the head of the ORQ: responses come in request order).
      read = this.orq[0] ?? null;
      if (!read || read.kind !== 'read') return this.reject(seg, op, DdpError.LOCAL_CATASTROPHIC, 'Read Response with no outstanding Read');
      // T7: the response matches its Read Request.
      if (len > 0 && h.stag !== read.sinkStag) return this.reject(seg, op, DdpError.INVALID_STAG, `Read Response STag 0x${h.stag.toString(16)} is not the Sink STag`);
      if (len > 0 && h.to !== read.sinkTo + BigInt(read.received)) return this.reject(seg, op, DdpError.BASE_BOUNDS, `Read Response TO ${h.to} does not continue the Sink TO`);
      const total = read.received + len;
      if (total > read.size || (h.last && total !== read.size)) return this.reject(seg, op, DdpError.BASE_BOUNDS, `Read Response of ${total} octets for a Read of ${read.size}`);
    }
    if (len > 0) {
      this.rnic.memory.write(address, seg.payload);
      this.cfg.emit({ type: 'placement', side: this.side, address, length: len, stag: h.stag, op });
    }
    this.openTagged = h.last ? null : { opcode: seg.opcode, stag: h.stag, nextTo: h.to + BigInt(len) };
    if (read) {
      read.received += len;
      if (h.last) this.completeRead(read);
    }
  }

  private completeRead(read: OrqEntry): void {
    this.orq.shift();
    if (read.rtr) {
      if (this.rtrSlot) this.finish(this.rtrSlot, 'success', 0);
      this.rtrSlot = null;
    } else {
      this.finish(this.slotOf(read.wr), 'success', read.size);
    }
    this.issueCredited();
  }

  private slotOf(wr: WorkRequest | null): CompletionSlot {
    const slot = this.slots.find((s) => s.op === (wr?.id ?? null) && s.event === null);
    if (!slot) throw new Error(`internal: no open completion slot for op ${wr?.id}`);
    return slot;
  }

  private receiveUntagged(seg: CheckedSegment, h: UntaggedHeader, op: number | null): void {
    const opcode = seg.opcode;
    // U1: the QN this opcode travels on.
    const qn = queueOf(opcode);
    if (h.qn !== qn) return this.reject(seg, op, DdpError.INVALID_QN, `QN ${h.qn} for opcode 0x${opcode.toString(16)} (expected ${qn})`);
    const open = this.openUntagged.get(qn);
    let buffer: RecvBuffer | null = null;
    if (open) {
      // H8 for untagged: same opcode, MSN and the next MO (U2 and U4 codes).
      if (opcode !== open.opcode) return this.reject(seg, op, RdmapError.UNEXPECTED_OPCODE, `opcode 0x${opcode.toString(16)} inside an open message of opcode 0x${open.opcode.toString(16)}`);
      if (h.msn !== open.msn) return this.reject(seg, op, DdpError.MSN_RANGE, `MSN ${h.msn} while message ${open.msn} is open on QN ${qn}`);
      if (h.mo !== open.placed) return this.reject(seg, op, DdpError.INVALID_MO, `MO ${h.mo}, expected ${open.placed}`);
      buffer = open.buffer;
    } else {
      // U2: the expected MSN (an in-order receiver).
      if (h.msn !== this.rxMsn[qn]) return this.reject(seg, op, DdpError.MSN_RANGE, `MSN ${h.msn} on QN ${qn}, expected ${this.rxMsn[qn]}`);
      // U3: a buffer for (QN, MSN).
      if (qn === Qn.SEND) {
        if (!this.receives.length) return this.reject(seg, op, DdpError.NO_BUFFER, `no receive buffer posted for MSN ${h.msn}`);
      } else if (qn === Qn.ATOMIC_RESPONSE && !this.orq.some((e) => e.kind === 'atomic')) {
        return this.reject(seg, op, DdpError.NO_BUFFER, 'Atomic Response with no outstanding Atomic Request');
      }
      // U4: a new message starts at MO 0.
      if (h.mo !== 0) return this.reject(seg, op, DdpError.INVALID_MO, `MO ${h.mo} on the first segment of message ${h.msn}`);
      if (qn === Qn.SEND) buffer = this.receives[0]!;
    }
    // Messages with a fixed RDMAP part are one segment (spec/rdmap-extensions.md §1, project).
    if (!h.last && !isSendOpcode(opcode)) {
      return this.reject(seg, op, DdpError.TOO_LONG, `opcode 0x${opcode.toString(16)} continues past its fixed size (L = 0)`);
    }
    const len = seg.payload.length;
    const isImmediate = opcode === Opcode.IMMEDIATE || opcode === Opcode.IMMEDIATE_SE;
    const places = isSendOpcode(opcode) || (isImmediate && this.rnic.options.immDataPlacement === 'buffer');
    // U5: the message fits its buffer.
    if (places && buffer && h.mo + len > buffer.length) {
      return this.reject(seg, op, DdpError.TOO_LONG, `${h.mo + len} octets for a receive buffer of ${buffer.length}`);
    }
    if (!open && qn === Qn.SEND) this.receives.shift();
    if (places && buffer && len > 0) {
      const address = buffer.address + BigInt(h.mo);
      this.rnic.memory.write(address, seg.payload);
      this.cfg.emit({ type: 'placement', side: this.side, address, length: len, stag: null, op });
    }
    if (!h.last) {
      this.openUntagged.set(qn, { opcode, msn: h.msn, placed: h.mo + len, buffer });
      return;
    }
    this.openUntagged.delete(qn);
    this.rxMsn[qn] = (h.msn + 1) >>> 0;
    this.deliver(seg, h, h.mo + len, op);
  }

  /** RDMAP processing of a complete untagged message [RFC 5040 §5.5, §7.2; RFC 7306 §5, §6, §8]. */
  private deliver(seg: CheckedSegment, h: UntaggedHeader, length: number, op: number | null): void {
    const opcode = seg.opcode;
    const body = seg.payload;
    switch (opcode) {
      case Opcode.SEND:
      case Opcode.SEND_SE:
      case Opcode.SEND_INVALIDATE:
      case Opcode.SEND_SE_INVALIDATE: {
        let invalidatedStag: number | undefined;
        if (isInvalidateOpcode(opcode)) {
          // Invalidate before completing; on failure the message is not delivered.
          const r = this.rnic.stags.invalidate(h.rsvdUlp2, this.cfg.pd);
          if (!r.ok) {
            const e = r.fault === 'not-invalidatable' ? RdmapError.OPERATION_CANNOT_INVALIDATE : RdmapError.PROTECTION_CANNOT_INVALIDATE;
            return this.reject(seg, op, e, `cannot invalidate STag 0x${h.rsvdUlp2.toString(16)}: ${r.fault}`);
          }
          invalidatedStag = h.rsvdUlp2;
        }
        this.cfg.emit({
          type: 'completion',
          side: this.side,
          kind: 'recv',
          op,
          status: 'success',
          length,
          solicited: isSolicitedOpcode(opcode),
          ...(invalidatedStag !== undefined && { invalidatedStag }),
        });
        return;
      }
      case Opcode.IMMEDIATE:
      case Opcode.IMMEDIATE_SE:
        this.cfg.emit({
          type: 'completion',
          side: this.side,
          kind: 'recv-immediate',
          op,
          status: 'success',
          length: IMMEDIATE_DATA_SIZE,
          solicited: opcode === Opcode.IMMEDIATE_SE,
          immediate: hex(body),
        });
        return;
      case Opcode.READ_REQUEST: {
        const req = decodeReadRequest(body);
        let address = 0n;
        // Zero-length Read: Source STag and TO are not validated (spec/ddp-rdmap.md §5.4).
        if (req.size > 0) {
          const c = this.rnic.stags.check(req.srcStag, req.srcTo, req.size, this.cfg.pd, 'remote-read');
          if (!c.ok) return this.reject(seg, op, rdmapProtectionError(c.fault), `Read Request source: ${c.fault} for STag 0x${req.srcStag.toString(16)}`);
          address = c.address;
        }
        if (!this.irrqHasRoom(false)) return this.reject(seg, op, RdmapError.STREAM_CATASTROPHIC, `Read Request beyond IRD ${this.cfg.ird}`);
        this.irrq.push({ kind: 'read', req, address, op });
        return;
      }
      case Opcode.ATOMIC_REQUEST: {
        const req = decodeAtomicRequest(body);
        // A3–A9 (spec/rdmap-extensions.md §7).
        if (!this.irrqHasRoom(true)) return this.reject(seg, op, RdmapError.STREAM_CATASTROPHIC, `Atomic Request beyond IRD ${this.cfg.ird}`);
        const known = req.aopcode === AOpCode.FETCH_ADD || req.aopcode === AOpCode.CMP_SWAP || (req.aopcode === AOpCode.SWAP_DRAFT00 && this.rnic.options.draft00Swap);
        if (!known) return this.reject(seg, op, RdmapError.UNEXPECTED_OPCODE, `AOpCode 0x${req.aopcode.toString(16)}`);
        const c = this.rnic.stags.check(req.stag, req.to, 8, this.cfg.pd, 'remote-atomic');
        if (!c.ok) return this.reject(seg, op, rdmapProtectionError(c.fault), `Atomic target: ${c.fault} for STag 0x${req.stag.toString(16)}`);
        if (!isAligned64(c.address)) return this.reject(seg, op, RdmapError.STREAM_CATASTROPHIC, `Atomic target address 0x${c.address.toString(16)} is not 64-bit aligned`);
        this.irrq.push({ kind: 'atomic', req, address: c.address, op });
        return;
      }
      case Opcode.ATOMIC_RESPONSE: {
        const resp = decodeAtomicResponse(body);
        const head = this.orq[0];
        if (!head || head.kind !== 'atomic' || head.requestId !== resp.requestId) {
          return this.reject(seg, op, RdmapError.STREAM_CATASTROPHIC, `Atomic Response for request ${resp.requestId} does not match the oldest outstanding request`);
        }
        this.orq.shift();
        const wr = head.wr;
        if (wr?.kind === 'atomic' && wr.localStag !== null) {
          const c = this.rnic.stags.check(wr.localStag, wr.localTo, 8, this.cfg.pd, 'local-write');
          if (c.ok) {
            this.rnic.memory.write(c.address, u64ToBytes(resp.value, this.rnic.options.hostMemoryEndian));
            this.cfg.emit({ type: 'placement', side: this.side, address: c.address, length: 8, stag: wr.localStag, op });
          }
        }
        const match = wr?.kind === 'atomic' && wr.aopcode === AOpCode.CMP_SWAP ? ((resp.value ^ wr.compareData) & wr.compareMask) === 0n : undefined;
        this.finish(this.slotOf(wr), 'success', 8, { value: resp.value, ...(match !== undefined && { match }) });
        this.issueCredited();
        return;
      }
      case Opcode.TERMINATE: {
        const t = decodeTerminate(body)!;
        const name = formatErrorCode(t);
        this.cfg.emit({ type: 'terminate-received', side: this.side, layer: t.layer, etype: t.etype, code: t.code, name, reason: 'Terminate received', op });
        // A peer MAY stop sending after a Terminate; this one does, and completes everything in error.
        this.rxStopped = true;
        this.stopTransmit();
        return;
      }
    }
  }

  /** An error found in a received segment (no closure per segment: this is the hot path). */
  private reject(seg: CheckedSegment, op: number | null, error: ErrorCode, reason: string): void {
    this.fail(error, reason, seg.ulpdu, seg.opcode, op);
  }

  private irrqHasRoom(atomic: boolean): boolean {
    if (this.rnic.options.atomicCredits === 'shared') return this.irrq.length < unlimited(this.cfg.ird);
    const same = this.irrq.filter((e) => (e.kind === 'atomic') === atomic).length;
    return same < (atomic ? this.rnic.options.maxAtomics : unlimited(this.cfg.ird));
  }

  // ---------------------------------------------------------------------------------------------
  // Errors [RFC 5040 §7.1; spec/ddp-rdmap.md §2.4, §5.6, §8]

  private fail(error: ErrorCode, reason: string, ulpdu: Uint8Array | null, opcode: number | null, op: number | null): void {
    this.rxStopped = true;
    if (opcode === Opcode.TERMINATE) {
      // A malformed Terminate closes the stream; nobody answers a Terminate (siw).
      this.stopTransmit();
      this.cfg.emit({ type: 'closed', side: this.side, reason: `malformed Terminate: ${reason}` });
      return;
    }
    if (this.terminateSent) return;
    // What to copy (spec/ddp-rdmap.md §2.4): nothing for LLP errors and RDMAP local catastrophic;
    // the segment length and DDP header for the rest; the Read Request header for a Remote
    // Protection error on a Read Request.
    const withHeaders = ulpdu !== null && error.layer !== 2 && !(error.layer === 0 && error.etype === 0) && ulpdu.length >= headerSize((ulpdu[0]! & 0x80) !== 0);
    const tagged = ulpdu !== null && (ulpdu[0]! & 0x80) !== 0;
    const hdr = withHeaders ? headerSize(tagged) : 0;
    const r = withHeaders && error.layer === 0 && error.etype === 1 && opcode === Opcode.READ_REQUEST;
    const segmentLength = withHeaders ? (this.rnic.options.termSegLen === 'segment' ? ulpdu.length : ulpdu.length - hdr) : 0;
    const term = encodeTerminate({
      layer: error.layer,
      etype: error.etype,
      code: error.code,
      m: withHeaders,
      d: withHeaders,
      r,
      segmentLength,
      ddpHeader: withHeaders ? ulpdu.slice(0, hdr) : null,
      rdmaHeader: r ? ulpdu.slice(UNTAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE + READ_REQUEST_HEADER_SIZE) : null,
    });
    this.terminateSent = true;
    this.cfg.emit({ type: 'terminate-sent', side: this.side, layer: error.layer, etype: error.etype, code: error.code, name: error.name, reason, op });
    // Exactly one Terminate; nothing after it: drop what has not gone out yet (rule 5 of §8).
    this.stopTransmit();
    const ulpduOut = new Uint8Array(UNTAGGED_HEADER_SIZE + term.length);
    const msn = this.txMsn[Qn.TERMINATE]!;
    this.txMsn[Qn.TERMINATE] = (msn + 1) >>> 0;
    writeDdpHeader(ulpduOut, 0, { tagged: false, last: true, dv: DDP_VERSION, rsvdUlp: rdmapControl(Opcode.TERMINATE), rsvdUlp2: 0, qn: Qn.TERMINATE, msn, mo: 0 });
    ulpduOut.set(term, UNTAGGED_HEADER_SIZE);
    this.tx.push({ ulpdu: ulpduOut, opcode: Opcode.TERMINATE, op: null });
  }

  /** Stops transmitting: queued messages are dropped and every open work request is flushed. */
  private stopTransmit(): void {
    this.txStopped = true;
    this.tx.length = 0;
    this.irrq.length = 0;
    this.waitingForCredit.length = 0;
    this.orq.length = 0;
    for (const slot of this.slots) if (!slot.event) slot.event = { type: 'completion', side: this.side, kind: slot.kind, op: slot.op, status: 'flushed', length: 0 };
    while (this.slots.length) this.cfg.emit(this.slots.shift()!.event!);
  }
}
