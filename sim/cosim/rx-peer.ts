import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { encodeDdpSegment } from '../../ts-model/ddp/header';
import type { AccessRight } from '../../ts-model/memory/access';
import { firstTaggedOffset, type Region } from '../../ts-model/memory/stag-table';
import { makeStag } from '../../ts-model/memory/stag';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { LlpError } from '../../ts-model/terminate-codes';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { RdmapEndpoint } from '../../ts-model/rnic/endpoint';
import type { RnicEvent } from '../../ts-model/rnic/events';
import { RdmapOptionsSchema } from '../../ts-model/rnic/options';
import { Rnic } from '../../ts-model/rnic/rnic';
import type { WorkRequest } from '../../ts-model/rnic/work-request';
import type { Prng } from '../../ts-model/util/prng';

/**
 * The model side of the receive-path co-simulation: two model endpoints, `local` (the QP the RTL
 * stands in for) and `peer` (the remote one), their RNICs and STag tables, and the traffic the
 * peer sends: every opcode, valid work requests and the faults that raise each error code of
 * spec/ddp-rdmap.md §9. The harness (sim/cosim/rx.ts) feeds every peer ULPDU to the RTL and to
 * `local`, and compares.
 */

/** An STag table entry to program into the RTL too. */
export interface RtlRegion {
  readonly stag: number;
  readonly pd: number;
  readonly base: bigint;
  readonly length: bigint;
  readonly access: readonly AccessRight[];
  readonly va: boolean;
  readonly invalidatable: boolean;
}

/** What one step asks the RTL side to do besides feeding ULPDUs. */
export interface StepSideEffects {
  readonly recv: { addr: bigint; len: number }[];
  readonly orq: { atomic: boolean; stag: number; to: bigint; size: number; requestId: number }[];
  /** A local failure of the RNIC (RDMAP global catastrophic) meets the next ULPDU that passes H1–H7. */
  inject: boolean;
  abort: boolean;
  /** Hold m_axis_tready low while these ULPDUs go in (the IRD overflow). */
  blockTx: boolean;
  /** The ULPDUs go in back to back, the RTL settling only after the last. */
  burst: boolean;
  /** MPA failed the first ULPDU's FPDU with this LLP code (mpa_rx tuser 0 and err_code). */
  mpaError: number | null;
  /**
   * Work requests the local side posted (the RTL's transmit path sends them, in rnic_top), with
   * the host address of a Write's or Send's data; and every ULPDU the local model sent meanwhile,
   * in order (the RTL's transmit stream must carry the same).
   */
  readonly wrs: LocalWr[];
  readonly localSent: Uint8Array[];
}

/** A step with nothing on the side yet (its ULPDUs go in back to back). */
export const newSideEffects = (): StepSideEffects => ({ recv: [], orq: [], inject: false, abort: false, blockTx: false, burst: true, mpaError: null, wrs: [], localSent: [] });

/** A work request of the local side, as the RTL's work-request port takes it. */
export interface LocalWr {
  readonly wr: WorkRequest;
  /** Write / Send: where its data sits in the local host memory. */
  readonly addr: bigint;
  /** Atomic: the Request Identifier the model gave it. */
  readonly requestId: number;
}

export const FAULT_KINDS = [
  'write-bad-stag', 'write-pd', 'write-access', 'write-wrap', 'write-bounds',
  'hdr-dv-tagged', 'hdr-dv-untagged', 'hdr-rv', 'hdr-opcode', 'hdr-t', 'hdr-short', 'hdr-short-fixed', 'hdr-long',
  'qn', 'msn', 'mo', 'send-too-long', 'l-on-fixed', 'no-recv', 'h8-opcode', 'h8-stag', 'h8-to', 'h8-untagged',
  'rr-unexpected', 'rr-stag', 'rr-to', 'rr-length',
  'read-src-stag', 'read-src-pd', 'read-src-access', 'read-src-wrap', 'read-src-bounds', 'ird',
  'inv-stag', 'inv-pd', 'inv-not-allowed',
  'atomic-aopcode', 'atomic-stag', 'atomic-pd', 'atomic-access', 'atomic-bounds', 'atomic-misaligned', 'atomic-resp-id', 'atomic-resp-none',
  'terminate', 'terminate-malformed', 'inject', 'abort', 'mpa-crc', 'mpa-marker',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The fault kinds in turn, from a random start (one draw): every kind comes up in a long run. */
export class FaultTurns {
  private i: number;

  constructor(r: Prng) {
    this.i = r.int(0, FAULT_KINDS.length - 1);
  }

  next(): FaultKind {
    return FAULT_KINDS[this.i++ % FAULT_KINDS.length]!;
  }
}

/**
 * Faults not drawn while the local output is held: those built on a local Read or Atomic Request
 * and its answer, and the IRD overflow (it holds m_axis, and the model would answer late).
 */
const NOT_WHILE_HELD: ReadonlySet<FaultKind> = new Set(['rr-stag', 'rr-to', 'rr-length', 'atomic-resp-id', 'atomic-resp-none', 'ird']);

/** Receive buffers the RTL queues (ddp_rx_ctl rqDepth). */
export const RECV_QUEUE_DEPTH = 16;

const ALL_RIGHTS: AccessRight[] = ['local-read', 'local-write', 'remote-read', 'remote-write', 'remote-atomic'];

export interface RxPeerOptions {
  readonly pd: number;
  readonly ird: number;
  readonly initialMsn: number;
  /** Largest ULPDU the peer sends (the RTL's payload FIFO must hold it). */
  readonly peerMulpdu: number;
  /** Largest ULPDU the local side sends (cfg_mulpdu). */
  readonly localMulpdu: number;
  readonly bigEndian: boolean;
  /**
   * The local side implements RFC 7306 (default true). Off, it posts no Immediate Data or Atomic
   * work requests, and the peer sends those only now and then: the local side must answer them
   * with Unexpected OpCode (0x0/0x2/0x06).
   */
  readonly rfc7306?: boolean;
  readonly stagDepth: number;
  /**
   * STag indices the local regions take (default: 1 up, the whole table): QPs that share one STag
   * table (rnic_top) each take their own, so no QP's peer reaches another QP's regions.
   */
  readonly stagIndices?: { readonly first: number; readonly count: number };
  /** First host address of the local RNIC's allocations (QPs sharing one host memory keep apart). */
  readonly addressBase?: bigint;
}

export class RxPeer {
  readonly localRnic: Rnic;
  readonly peerRnic: Rnic;
  readonly local: RdmapEndpoint;
  readonly peer: RdmapEndpoint;
  readonly localEvents: RnicEvent[] = [];
  /** Regions of the local RNIC (programmed into the RTL's STag table). */
  readonly regions: RtlRegion[] = [];
  /**
   * The local side sends nothing yet (MPA fencing: the RTL holds its FPDUs until the peer's first):
   * work requests stay in the model's queue, and none that needs an answer at once is drawn.
   */
  holdOutput = false;
  /** Receive buffers posted on the local side, oldest first (mirrors the model's queue). */
  readonly posted: { addr: bigint; len: number }[] = [];
  /** Address ranges whose contents the harness compares. */
  readonly ranges: { addr: bigint; len: number }[] = [];
  private readonly peerRegions: { read: Region; sink: Region; atomic: Region; write: Region };
  private nextId = 1;
  private nextIndex = 1;
  private localRegions = 0;
  private readonly peerRegion: (access: AccessRight[], length: bigint) => Region;

  constructor(
    private readonly r: Prng,
    readonly opts: RxPeerOptions,
  ) {
    const options = RdmapOptionsSchema.parse({ hostMemoryEndian: opts.bigEndian ? 'big' : 'little' });
    this.localRnic = new Rnic('rtl', { ...options, rfc7306: this.rfc7306 }, opts.addressBase);
    this.peerRnic = new Rnic('peer', options);
    this.local = new RdmapEndpoint({ side: 'responder', rnic: this.localRnic, pd: opts.pd, mulpdu: opts.localMulpdu, ird: opts.ird, ord: 16, emit: (e) => this.localEvents.push(e), initialMsn: opts.initialMsn });
    // The peer keeps no ORD of its own (it is allowed to overrun the local IRD, for the IRD fault).
    this.peer = new RdmapEndpoint({ side: 'initiator', rnic: this.peerRnic, pd: 1, mulpdu: opts.peerMulpdu, ird: 0x3fff, ord: 0x3fff, emit: () => {}, initialMsn: opts.initialMsn });
    // Local regions: a few with every right in the stream's PD, and the odd ones.
    const n = r.int(3, 6);
    for (let i = 0; i < n; i++) this.addRegion({ access: ALL_RIGHTS });
    this.addRegion({ access: ALL_RIGHTS, pd: (opts.pd + 1) & 0xffff });
    this.addRegion({ access: ['local-read', 'local-write'] });
    this.addRegion({ access: ALL_RIGHTS, invalidatable: false });
    // Peer regions: Read source, Read sink (the peer's local-write) and atomic target.
    const peerRegion = (access: AccessRight[], length: bigint): Region => {
      const base = this.peerRnic.allocate(length);
      this.peerRnic.memory.write(base, r.bytes(Number(length)));
      return this.peerRnic.stags.register({ stag: makeStag(this.nextIndex++, r.int(0, 255)), pd: 1, base, length, access, addressing: 'zero-based' });
    };
    this.peerRegions = { read: peerRegion(['remote-read'], 65536n), sink: peerRegion(['local-write'], 65536n), atomic: peerRegion(['remote-atomic'], 4096n), write: peerRegion(['remote-write'], 65536n) };
    this.peerRegion = peerRegion;
  }

  private addRegion(o: { access: AccessRight[]; pd?: number; invalidatable?: boolean }): RtlRegion {
    const r = this.r;
    const length = BigInt(r.pick([r.int(1, 64), r.int(64, 4096), r.int(4096, 24000)]));
    // Off the 4 KiB allocation by up to 255 octets, with room for it: no two regions overlap.
    const base = this.localRnic.allocate(length + 255n) + BigInt(r.bool(0.5) ? 0 : r.int(0, 255));
    const va = r.bool(0.5);
    const spec: RtlRegion = { stag: makeStag(this.localIndex(), r.int(0, 255)), pd: o.pd ?? this.opts.pd, base, length, access: o.access, va, invalidatable: o.invalidatable ?? true };
    this.localRnic.stags.register({ stag: spec.stag, pd: spec.pd, base, length, access: [...spec.access], addressing: va ? 'va' : 'zero-based', invalidatable: spec.invalidatable });
    this.localRnic.memory.write(base, r.bytes(Number(length)));
    this.regions.push(spec);
    this.ranges.push({ addr: base, len: Number(length) });
    return spec;
  }

  /** The STag index of the next local region. */
  private localIndex(): number {
    const { first, count } = this.opts.stagIndices ?? { first: 1, count: this.opts.stagDepth - 1 };
    if (this.localRegions >= count) throw new RangeError(`the peer's regions need more than the ${count} STag indices from ${first}`);
    return first + this.localRegions++;
  }

  /** Valid local regions of the stream's PD with `right`. */
  private usable(right: AccessRight, extra: (g: RtlRegion) => boolean = () => true): RtlRegion[] {
    return this.regions.filter((g) => g.pd === this.opts.pd && g.access.includes(right) && this.localRnic.stags.lookup(g.stag)?.valid && extra(g));
  }

  private get rfc7306(): boolean {
    return this.opts.rfc7306 ?? true;
  }

  private firstTo(g: RtlRegion): bigint {
    return firstTaggedOffset({ ...g, access: new Set(g.access), addressing: g.va ? 'va' : 'zero-based', valid: true } as Region);
  }

  /** A (TO, length) inside region g. */
  private span(g: RtlRegion, maxLen: number, align = 1): { to: bigint; len: number } {
    const r = this.r;
    const glen = Number(g.length);
    let off = r.int(0, Math.max(0, glen - 1));
    off -= off % align;
    const len = Math.min(r.pick([0, r.int(1, 64), r.int(1, maxLen)]), glen - off);
    return { to: this.firstTo(g) + BigInt(off), len };
  }

  private postRecv(fx: StepSideEffects, atLeast: number): void {
    if (this.local.postedReceives >= RECV_QUEUE_DEPTH) throw new Error(`internal: more than ${RECV_QUEUE_DEPTH} receive buffers posted`);
    // Up to 40 000 octets: past 2^14 and 2^15 (every bit of a message's length is seen), more than
    // any one message needs.
    const len = Math.max(atLeast, this.r.pick([atLeast, this.r.int(atLeast, atLeast + 64), this.r.int(atLeast, 40000)]));
    const addr = this.local.postReceive(len);
    this.localRnic.memory.write(addr, this.r.bytes(len));
    this.posted.push({ addr, len });
    this.ranges.push({ addr, len });
    fx.recv.push({ addr, len });
  }

  /** The peer's ULPDUs after posting `wr`, every one handed to MPA. */
  private send(wr: WorkRequest | null): Uint8Array[] {
    if (wr) this.peer.post(wr);
    return this.peer.pull().map((o) => {
      o.onSent?.();
      return o.ulpdu;
    });
  }

  private data(n: number): Uint8Array {
    return this.r.bytes(n);
  }

  /** One valid message from the peer (or a request of the local side answered by the peer). */
  valid(fx: StepSideEffects, maxLen: number): Uint8Array[] {
    const r = this.r;
    // A peer that sent or received a Terminate sends nothing more (RFC 5040 §7.1 rule 5).
    if (this.peer.stopped || this.peer.terminated) return [];
    const atomicTargets = this.usable('remote-atomic', (x) => x.length >= 8n && x.base % 8n === 0n);
    const needs: Record<string, number> = {
      write: this.usable('remote-write').length,
      read: this.usable('remote-read').length,
      atomic: atomicTargets.length,
      'local-read': this.usable('local-write').length,
      'read-burst': this.usable('remote-read').length,
    };
    let kind = r.pick(['write', 'write', 'write', 'send', 'send', 'send-inv', 'immediate', 'read', 'read-burst', 'atomic', 'local-read', 'local-atomic', 'write-then-read', 'write-then-atomic'] as const);
    // Without RFC 7306 on the local side, its extensions are an error: only now and then.
    if (!this.rfc7306 && (kind === 'immediate' || kind === 'atomic' || kind === 'write-then-atomic') && r.bool(0.9)) kind = 'write';
    if (!this.rfc7306 && kind === 'local-atomic') kind = 'local-read';
    // A local request is answered at once, which a held local side cannot be: the peer's own message.
    if (this.holdOutput && (kind === 'local-read' || kind === 'local-atomic')) kind = 'write';
    needs['write-then-read'] = this.usable('remote-read', (g) => g.access.includes('remote-write')).length;
    needs['write-then-atomic'] = atomicTargets.filter((g) => g.access.includes('remote-write')).length;
    // Send with Invalidate may have used up a kind's regions: fall back to a Send.
    if (needs[kind] === 0) kind = 'send';
    const id = this.nextId++;
    switch (kind) {
      case 'write': {
        const g = r.pick(this.usable('remote-write'));
        const { to, len } = this.span(g, maxLen);
        return this.send({ kind: 'write', id, stag: g.stag, to, data: this.data(len) });
      }
      case 'send':
      case 'send-inv':
      case 'immediate': {
        if (this.posted.length === 0) this.postRecv(fx, 0);
        const head = this.posted[0]!;
        this.posted.shift();
        if (kind === 'immediate') return this.send({ kind: 'immediate', id, solicited: r.bool(), data: this.data(8) });
        const len = Math.min(head.len, r.pick([0, r.int(1, 64), r.int(0, maxLen)]));
        const inv = kind === 'send-inv' ? this.usable('remote-write', (g) => g.invalidatable) : [];
        return this.send({ kind: 'send', id, solicited: r.bool(), invalidate: inv.length ? r.pick(inv).stag : null, data: this.data(len) });
      }
      case 'read': {
        const g = r.pick(this.usable('remote-read'));
        const { to, len } = this.span(g, maxLen * 3);
        const sink = this.peerRegions.sink;
        return this.send({ kind: 'read', id, stag: g.stag, to, length: len, localStag: sink.stag, localTo: BigInt(r.int(0, 65536 - len)) });
      }
      case 'read-burst': {
        // Up to IRD Read Requests back to back, as many as the responder may hold (IRD, RFC 5040 §6.1):
        // with an IRD above the IRRQ's depth the IRRQ fills and the receive side waits for room.
        const out: Uint8Array[] = [];
        for (let i = r.int(Math.min(2, this.opts.ird), this.opts.ird); i > 0; i--) {
          const g = r.pick(this.usable('remote-read'));
          const { to, len } = this.span(g, Math.min(maxLen, 512));
          out.push(...this.send({ kind: 'read', id: this.nextId++, stag: g.stag, to, length: len, localStag: this.peerRegions.sink.stag, localTo: 0n }));
        }
        return out;
      }
      case 'atomic': {
        const g = r.pick(atomicTargets);
        const { to } = this.span({ ...g, length: g.length - 7n }, 1, 8);
        return this.send(this.atomicWr(id, g.stag, to, r.pick([AOpCode.FETCH_ADD, AOpCode.CMP_SWAP])));
      }
      case 'local-read':
      case 'local-atomic':
        return this.localRequest(fx, kind === 'local-atomic', maxLen);
      case 'write-then-read': {
        // A Write and, right behind it, a Read of what it wrote: the response must carry the new
        // octets (RFC 5040 §5.5 rule 6), however far the placement lags.
        const g = r.pick(this.usable('remote-read', (x) => x.access.includes('remote-write')));
        const { to, len } = this.span(g, maxLen);
        this.peer.post({ kind: 'write', id, stag: g.stag, to, data: this.data(len) });
        return this.send({ kind: 'read', id: this.nextId++, stag: g.stag, to, length: len, localStag: this.peerRegions.sink.stag, localTo: 0n });
      }
      case 'write-then-atomic': {
        const g = r.pick(atomicTargets.filter((x) => x.access.includes('remote-write')));
        const { to } = this.span({ ...g, length: g.length - 7n }, 1, 8);
        this.peer.post({ kind: 'write', id, stag: g.stag, to, data: this.data(8) });
        return this.send(this.atomicWr(this.nextId++, g.stag, to, r.pick([AOpCode.FETCH_ADD, AOpCode.CMP_SWAP])));
      }
    }
  }

  private atomicWr(id: number, stag: number, to: bigint, aopcode: number): WorkRequest {
    const r = this.r;
    return {
      kind: 'atomic', id, localStag: null, localTo: 0n, aopcode, stag, to,
      addSwapData: r.u64(), addSwapMask: r.pick([0n, r.u64()]), compareData: r.u64(), compareMask: r.pick([0n, r.u64(), (1n << 64n) - 1n]),
    };
  }

  /**
   * The local side (the RTL's QP) sends a Read or Atomic Request (its transmit path, not under
   * test here): the request goes into the RTL's ORQ and to the peer, whose response comes back.
   */
  private localRequest(fx: StepSideEffects, atomic: boolean, maxLen: number): Uint8Array[] {
    const r = this.r;
    const id = this.nextId++;
    const sinks = this.usable('local-write');
    let wr: WorkRequest;
    if (atomic || sinks.length === 0) {
      if (!this.rfc7306) throw new Error('internal: an Atomic work request on a QP without RFC 7306');
      const t = this.peerRegions.atomic;
      wr = this.atomicWr(id, t.stag, BigInt(8 * r.int(0, 511)), r.pick([AOpCode.FETCH_ADD, AOpCode.CMP_SWAP]));
    } else {
      const g = r.pick(sinks);
      const { to, len } = this.span(g, maxLen * 2);
      wr = { kind: 'read', id, stag: this.peerRegions.read.stag, to: BigInt(r.int(0, 65536 - len)), length: len, localStag: g.stag, localTo: to };
    }
    this.postLocal(fx, wr, 0n);
    return this.send(null);
  }

  /**
   * The local side sends a Write, a Send or Immediate Data to the peer (rnic_top's transmit path):
   * the data is put in local host memory first, where the RTL reads it.
   */
  localSend(fx: StepSideEffects, maxLen: number): void {
    const r = this.r;
    const id = this.nextId++;
    const kind = r.pick(['write', 'write', 'send', 'send', ...(this.rfc7306 ? ['immediate' as const] : [])]);
    if (kind === 'immediate') {
      // Immediate Data takes a receive buffer of the peer's QN 0, as a Send does (RFC 7306 §6).
      this.peer.postReceive(r.int(0, 64));
      this.postLocal(fx, { kind: 'immediate', id, solicited: r.bool(), data: this.data(8) }, 0n);
      return;
    }
    const len = r.pick([0, r.int(1, 64), r.int(1, maxLen), r.int(1, 65536)]);
    // Up to 63 octets past the allocation's start, and 63 more allocated: the source buffers of
    // a burst of work requests never overlap (the RTL reads them after all are written).
    const addr = this.localRnic.allocate(Math.max(len, 1) + 63) + BigInt(r.int(0, 63));
    const data = this.data(len);
    this.localRnic.memory.write(addr, data);
    this.ranges.push({ addr, len });
    if (kind === 'write') {
      const to = BigInt(r.int(0, 65536 - len));
      this.postLocal(fx, { kind: 'write', id, stag: this.peerRegions.write.stag, to, data }, addr);
    } else {
      this.peer.postReceive(len);
      // Send with Invalidate of a peer region made for it (RFC 5040 §6.4.1), now and then.
      const invalidate = r.bool(0.2) ? this.peerRegion(['remote-write'], 64n).stag : null;
      this.postLocal(fx, { kind: 'send', id, solicited: r.bool(), invalidate, data }, addr);
    }
  }

  /**
   * Posts `wr` on the local model, sends what it sends to the peer, and records both in `fx`;
   * with holdOutput the model keeps what it would send (the harness pulls it when MPA fencing opens).
   */
  private postLocal(fx: StepSideEffects, wr: WorkRequest, addr: bigint): void {
    this.local.post(wr);
    let requestId = 0;
    if (this.holdOutput) {
      if (wr.kind === 'read' || wr.kind === 'atomic') throw new Error(`internal: a ${wr.kind} work request while the local side's output is held`);
      fx.wrs.push({ wr, addr, requestId });
      return;
    }
    for (const o of this.local.pull()) {
      o.onSent?.();
      const op = o.ulpdu[1]! & 0x0f;
      // A request's first segment (MO 0, RFC 5041 §4.4) carries its header; below MULPDU 70 an
      // Atomic Request has a second one, the rest of its Compare Mask.
      const mo = new DataView(o.ulpdu.buffer, o.ulpdu.byteOffset).getUint32(UNTAGGED_HEADER_SIZE - 4);
      if ((op === Opcode.READ_REQUEST || op === Opcode.ATOMIC_REQUEST) && mo === 0) {
        const v = new DataView(o.ulpdu.buffer, o.ulpdu.byteOffset + UNTAGGED_HEADER_SIZE);
        if (op === Opcode.ATOMIC_REQUEST) requestId = v.getUint32(4);
        fx.orq.push(
          op === Opcode.ATOMIC_REQUEST
            ? { atomic: true, stag: 0, to: 0n, size: 0, requestId: v.getUint32(4) }
            : { atomic: false, stag: v.getUint32(0), to: v.getBigUint64(4), size: v.getUint32(12), requestId: 0 },
        );
      }
      fx.localSent.push(o.ulpdu);
      this.peer.receive(o.ulpdu);
    }
    fx.wrs.push({ wr, addr, requestId });
  }

  /** ULPDUs the local side sent (responses, Terminate) go to the peer, as the network would. */
  deliverToPeer(ulpdus: readonly Uint8Array[]): void {
    for (const u of ulpdus) if (!this.peer.stopped) this.peer.receive(u);
  }

  /**
   * A message that raises `kind`'s error (the model decides the code; the harness only counts
   * what it hits). Returns null when the episode's state cannot produce this fault now.
   */
  fault(kind: FaultKind, fx: StepSideEffects, maxLen: number): Uint8Array[] | null {
    if (this.holdOutput && NOT_WHILE_HELD.has(kind)) return null;
    const r = this.r;
    const id = this.nextId++;
    const pick = <T>(xs: T[]): T | null => (xs.length ? r.pick(xs) : null);
    const regionWith = (right: AccessRight) => pick(this.usable(right, (g) => g.length >= 16n));
    const writeTo = (stag: number, to: bigint, len: number) => this.send({ kind: 'write', id, stag, to, data: this.data(len) });
    const setU32 = (u: Uint8Array, at: number, v: number) => new DataView(u.buffer, u.byteOffset).setUint32(at, v >>> 0);
    // Nothing sent (the peer model has nothing it may send now): no fault this time.
    const mutateFirst = (us: Uint8Array[], f: (u: Uint8Array) => Uint8Array | void) => {
      if (!us.length) return null;
      const u = us[0]!.slice();
      us[0] = f(u) ?? u;
      return us;
    };
    const anyValid = () => {
      for (let tries = 0; tries < 8; tries++) {
        const us = this.valid(fx, maxLen);
        if (us.length) return us;
      }
      return [];
    };
    const wrongPd = this.regions.find((g) => g.pd !== this.opts.pd)!;
    const noWrite = this.regions.find((g) => !g.access.includes('remote-write'))!;
    switch (kind) {
      case 'write-bad-stag': {
        const stag = r.bool() ? makeStag(r.int(this.opts.stagDepth, 0xffffff), r.int(0, 255)) : (r.pick(this.regions).stag ^ r.int(1, 255)) >>> 0;
        return writeTo(stag, 0n, r.int(1, 256));
      }
      case 'write-pd':
        return writeTo(wrongPd.stag, this.firstTo(wrongPd), 1);
      case 'write-access':
        return writeTo(noWrite.stag, this.firstTo(noWrite), 1);
      case 'write-wrap': {
        const g = regionWith('remote-write');
        if (!g) return null;
        return writeTo(g.stag, (1n << 64n) - BigInt(r.int(1, 100)), r.int(101, 300));
      }
      case 'write-bounds': {
        const g = regionWith('remote-write');
        if (!g) return null;
        return writeTo(g.stag, this.firstTo(g) + g.length - BigInt(r.int(0, 8)), r.int(9, 64));
      }
      case 'hdr-dv-tagged':
      case 'hdr-dv-untagged': {
        const g = regionWith('remote-write');
        const us = kind === 'hdr-dv-tagged' && g ? writeTo(g.stag, this.firstTo(g), r.int(0, 15)) : this.untaggedValid(fx, maxLen);
        return mutateFirst(us, (u) => void (u[0] = (u[0]! & ~0x03) | r.pick([0, 2, 3])));
      }
      case 'hdr-rv':
        return mutateFirst(anyValid(), (u) => void (u[1] = (u[1]! & 0x3f) | (r.pick([0, 2, 3]) << 6)));
      case 'hdr-opcode':
        return mutateFirst(anyValid(), (u) => void (u[1] = (u[1]! & 0xf0) | r.int(0xc, 0xf)));
      case 'hdr-t':
        return mutateFirst(anyValid(), (u) => void (u[0] = u[0]! ^ 0x80));
      case 'hdr-short':
        return mutateFirst(anyValid(), (u) => u.slice(0, r.int(0, 13)));
      case 'hdr-short-fixed': {
        const g = regionWith('remote-read');
        if (!g) return null;
        const us = this.send({ kind: 'read', id, stag: g.stag, to: this.firstTo(g), length: 1, localStag: this.peerRegions.sink.stag, localTo: 0n });
        return mutateFirst(us, (u) => u.slice(0, r.int(18, 45)));
      }
      case 'hdr-long': {
        const g = regionWith('remote-read');
        if (!g) return null;
        const us = this.send({ kind: 'read', id, stag: g.stag, to: this.firstTo(g), length: 1, localStag: this.peerRegions.sink.stag, localTo: 0n });
        return mutateFirst(us, (u) => new Uint8Array([...u, ...this.data(r.int(1, 40))]));
      }
      case 'qn':
        return mutateFirst(this.untaggedValid(fx, maxLen), (u) => setU32(u, 6, r.pick([4, 5, r.u32(), (new DataView(u.buffer, u.byteOffset).getUint32(6) + 1) & 3])));
      case 'msn':
        return mutateFirst(this.untaggedValid(fx, maxLen), (u) => setU32(u, 10, new DataView(u.buffer, u.byteOffset).getUint32(10) + r.pick([1, 2, -1, 1000])));
      case 'mo':
        return mutateFirst(this.untaggedValid(fx, maxLen), (u) => setU32(u, 14, r.int(1, 5000)));
      case 'send-too-long': {
        if (this.posted.length === 0) this.postRecv(fx, 0);
        const head = this.posted.shift()!;
        return this.send({ kind: 'send', id, solicited: false, invalidate: null, data: this.data(head.len + r.int(1, 100)) });
      }
      case 'l-on-fixed':
        return mutateFirst(this.untaggedValid(fx, maxLen, true), (u) => void (u[0] = u[0]! & ~0x40));
      case 'no-recv': {
        // Use up the posted buffers with zero-length Sends, then one Send too many.
        const out: Uint8Array[] = [];
        while (this.posted.length) {
          this.posted.shift();
          out.push(...this.send({ kind: 'send', id: this.nextId++, solicited: false, invalidate: null, data: this.data(0) }));
        }
        return [...out, ...this.send({ kind: 'send', id, solicited: false, invalidate: null, data: this.data(r.int(0, 100)) })];
      }
      case 'h8-opcode':
      case 'h8-stag':
      case 'h8-to': {
        // A first segment with L = 0 opens the tagged message; the next one does not continue it.
        const g = pick(this.usable('remote-write', (x) => x.length >= 32n));
        if (!g) return null;
        const len = r.int(1, 16);
        // Nothing sent (the peer model may not send now): no fault this time.
        const sent = writeTo(g.stag, this.firstTo(g), len);
        if (!sent.length) return null;
        const first = sent[0]!.slice();
        first[0] = first[0]! & ~0x40;
        const u = first.slice();
        const v = new DataView(u.buffer, u.byteOffset);
        v.setBigUint64(6, v.getBigUint64(6) + BigInt(len));
        if (kind === 'h8-opcode') u[1] = (u[1]! & 0xf0) | Opcode.READ_RESPONSE;
        else if (kind === 'h8-stag') setU32(u, 2, g.stag ^ 0x100);
        else v.setBigUint64(6, v.getBigUint64(6) + BigInt(r.int(1, 8)));
        u[0] = u[0]! | 0x40;
        return [first, u];
      }
      case 'h8-untagged': {
        // A Send segment with L = 0, then a segment of another opcode on the same QN.
        if (this.posted.length === 0) this.postRecv(fx, 16);
        const head = this.posted.shift()!;
        const len = Math.min(head.len, r.int(0, 16));
        const sent = this.send({ kind: 'send', id, solicited: false, invalidate: null, data: this.data(len) });
        if (!sent.length) {
          // Nothing sent (the peer model may not send now): the buffer stays posted, no fault.
          this.posted.unshift(head);
          return null;
        }
        const first = sent[0]!.slice();
        first[0] = first[0]! & ~0x40;
        const u = first.slice();
        u[0] = u[0]! | 0x40;
        u[1] = (u[1]! & 0xf0) | r.pick([Opcode.SEND_SE, Opcode.IMMEDIATE]);
        setU32(u, 14, len);
        return [first, u];
      }
      case 'rr-unexpected': {
        // A Read Response into a local-write buffer with no Read outstanding (T6).
        const g = pick(this.usable('local-write'));
        if (!g) return null;
        const { to, len } = this.span(g, 64);
        return [strayReadResponse(g.stag, to, this.data(len))];
      }
      case 'rr-stag':
      case 'rr-to':
      case 'rr-length': {
        if (!this.usable('local-write').length) return null;
        const us = this.localRequest(fx, false, maxLen);
        const first = us[0];
        if (!first || first.length <= 14) return null;
        const u = first.slice();
        if (kind === 'rr-stag') setU32(u, 2, new DataView(u.buffer, u.byteOffset).getUint32(2) ^ 0x200);
        else if (kind === 'rr-to') new DataView(u.buffer, u.byteOffset).setBigUint64(6, new DataView(u.buffer, u.byteOffset).getBigUint64(6) + 1n);
        else return [...us, ...us.slice(-1)];
        return [u];
      }
      case 'read-src-stag':
      case 'read-src-pd':
      case 'read-src-access':
      case 'read-src-wrap':
      case 'read-src-bounds': {
        const g = regionWith('remote-read');
        if (!g) return null;
        const noRead = this.regions.find((x) => !x.access.includes('remote-read'))!;
        const [stag, to, length] =
          kind === 'read-src-stag' ? [(g.stag ^ 0x55) >>> 0, 0n, 16]
          : kind === 'read-src-pd' ? [wrongPd.stag, this.firstTo(wrongPd), 1]
          : kind === 'read-src-access' ? [noRead.stag, this.firstTo(noRead), 1]
          : kind === 'read-src-wrap' ? [g.stag, (1n << 64n) - 4n, 16]
          : [g.stag, this.firstTo(g), Number(g.length) + r.int(1, 50)];
        return this.send({ kind: 'read', id, stag, to, length, localStag: this.peerRegions.sink.stag, localTo: 0n });
      }
      case 'ird': {
        fx.blockTx = true;
        const g = regionWith('remote-read');
        if (!g) return null;
        const out: Uint8Array[] = [];
        // IRD + 6 Reads: rnic_top's transmit pipeline (mpa_tx) holds a few responses before m_axis.
        for (let i = 0; i <= this.opts.ird + 5; i++) out.push(...this.send({ kind: 'read', id: this.nextId++, stag: g.stag, to: this.firstTo(g), length: r.int(0, 16), localStag: this.peerRegions.sink.stag, localTo: 0n }));
        return out;
      }
      case 'inv-stag':
      case 'inv-pd':
      case 'inv-not-allowed': {
        if (this.posted.length === 0) this.postRecv(fx, 0);
        this.posted.shift();
        const target =
          kind === 'inv-stag' ? makeStag(r.int(this.opts.stagDepth, 0xffffff), 1)
          : kind === 'inv-pd' ? wrongPd.stag
          : this.regions.find((g) => !g.invalidatable)!.stag;
        return this.send({ kind: 'send', id, solicited: r.bool(), invalidate: target, data: this.data(r.int(0, 32)) });
      }
      case 'atomic-aopcode': {
        const g = regionWith('remote-atomic');
        if (!g) return null;
        return this.send(this.atomicWr(id, g.stag, this.firstTo(g), r.pick([0x1, 0x3, 0xf])));
      }
      case 'atomic-stag':
      case 'atomic-pd':
      case 'atomic-access':
      case 'atomic-bounds':
      case 'atomic-misaligned': {
        const g = pick(this.usable('remote-atomic', (x) => x.length >= 16n));
        if (!g) return null;
        const [stag, to] =
          kind === 'atomic-stag' ? [(g.stag ^ 0x33) >>> 0, 0n]
          : kind === 'atomic-pd' ? [wrongPd.stag, this.firstTo(wrongPd)]
          : kind === 'atomic-access' ? [noWrite.stag, this.firstTo(noWrite)]
          : kind === 'atomic-bounds' ? [g.stag, this.firstTo(g) + g.length - 4n]
          : [g.stag, this.firstTo(g) + BigInt(g.base % 8n === 0n ? r.int(1, 7) : 0)];
        // The check is on the translated address (RFC 7306 §5.2.3): base + (TO − first TO).
        if (kind === 'atomic-misaligned' && (g.base + (to - this.firstTo(g))) % 8n === 0n) return null;
        return this.send(this.atomicWr(id, stag, to, AOpCode.FETCH_ADD));
      }
      case 'atomic-resp-id': {
        // Without RFC 7306 the local side has no Atomic work requests to be answered.
        if (!this.rfc7306) return null;
        const us = this.localRequest(fx, true, maxLen);
        return mutateFirst(us, (u) => setU32(u, UNTAGGED_HEADER_SIZE, new DataView(u.buffer, u.byteOffset).getUint32(UNTAGGED_HEADER_SIZE) ^ r.int(1, 0xffff)));
      }
      case 'atomic-resp-none': {
        // An Atomic Response again with the next MSN of QN 3: U3 (no Atomic Request outstanding).
        if (!this.rfc7306) return null;
        const us = this.localRequest(fx, true, maxLen);
        const last = us[us.length - 1];
        if (!last || (last[1]! & 0x0f) !== Opcode.ATOMIC_RESPONSE) return null;
        const u = last.slice();
        setU32(u, 10, new DataView(u.buffer, u.byteOffset).getUint32(10) + 1);
        return [...us, u];
      }
      case 'terminate': {
        this.peer.abort('peer tears the stream down');
        return this.send(null);
      }
      case 'terminate-malformed': {
        this.peer.abort('peer tears the stream down');
        return mutateFirst(this.send(null), (u) => setU32(u, r.pick([6, 10, 14]), r.int(3, 1000)));
      }
      case 'inject':
        fx.inject = true;
        return anyValid();
      case 'abort':
        // The local ULP tears the stream down while a message of the peer is on its way: the
        // Terminate's side drops it (RFC 5040 §5.6: nothing after the error is placed or completed).
        fx.abort = true;
        return anyValid();
      case 'mpa-crc':
      case 'mpa-marker':
        // MPA's checks failed the FPDU that carried it (spec/mpa.md §6): CRC 0x02, marker 0x03.
        fx.mpaError = kind === 'mpa-crc' ? LlpError.CRC.code : LlpError.MARKER.code;
        return anyValid();
    }
  }

  /** A valid untagged message (a Send, an Immediate, or with `fixed` a Read or Atomic Request). */
  private untaggedValid(fx: StepSideEffects, maxLen: number, fixed = false): Uint8Array[] {
    const r = this.r;
    const id = this.nextId++;
    const sources = this.usable('remote-read');
    if ((fixed || r.bool(0.3)) && sources.length) {
      const g = r.pick(sources);
      return this.send({ kind: 'read', id, stag: g.stag, to: this.firstTo(g), length: r.int(0, 64), localStag: this.peerRegions.sink.stag, localTo: 0n });
    }
    if (this.posted.length === 0) this.postRecv(fx, 0);
    const head = this.posted.shift()!;
    return this.send({ kind: 'send', id, solicited: false, invalidate: null, data: this.data(Math.min(head.len, r.int(0, maxLen))) });
  }
}

/** A crafted Read Response with no Read outstanding (for tests that need one without a peer). */
export function strayReadResponse(stag: number, to: bigint, payload: Uint8Array): Uint8Array {
  return encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag, to }, payload);
}
