import {
  ATOMIC_REQUEST_HEADER_SIZE,
  ATOMIC_RESPONSE_HEADER_SIZE,
  READ_REQUEST_HEADER_SIZE,
  TERM_SEGMENT_LENGTH_SIZE,
  TERMINATE_HEADER_SIZE,
  TermCtrl,
} from './constants';
import { ATOMIC_REQUEST, ATOMIC_RESPONSE, READ_REQUEST } from '../wire/layouts';

/**
 * RDMAP headers that follow the untagged DDP header (D+18): RDMA Read Request [RFC 5040 §4.4],
 * Terminate [RFC 5040 §4.8], Atomic Request/Response [RFC 7306 §5.2]. All fields big-endian.
 */

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.length);

export interface ReadRequestFields {
  readonly sinkStag: number;
  readonly sinkTo: bigint;
  /** RDMA Read Message Size, 0 .. 2^32 − 1. */
  readonly size: number;
  readonly srcStag: number;
  readonly srcTo: bigint;
}

export function encodeReadRequest(f: ReadRequestFields): Uint8Array {
  const out = new Uint8Array(READ_REQUEST_HEADER_SIZE);
  const v = view(out);
  const L = READ_REQUEST;
  v.setUint32(L.sink_stag.offset, f.sinkStag >>> 0);
  v.setBigUint64(L.sink_to.offset, BigInt.asUintN(64, f.sinkTo));
  v.setUint32(L.size.offset, f.size >>> 0);
  v.setUint32(L.src_stag.offset, f.srcStag >>> 0);
  v.setBigUint64(L.src_to.offset, BigInt.asUintN(64, f.srcTo));
  return out;
}

export function decodeReadRequest(b: Uint8Array): ReadRequestFields {
  const v = view(b);
  const L = READ_REQUEST;
  return { sinkStag: v.getUint32(L.sink_stag.offset), sinkTo: v.getBigUint64(L.sink_to.offset), size: v.getUint32(L.size.offset), srcStag: v.getUint32(L.src_stag.offset), srcTo: v.getBigUint64(L.src_to.offset) };
}

export interface AtomicRequestFields {
  /** 0x0 FetchAdd, 0x2 CmpSwap (0x1: draft-00 Swap). */
  readonly aopcode: number;
  readonly requestId: number;
  readonly stag: number;
  readonly to: bigint;
  readonly addSwapData: bigint;
  readonly addSwapMask: bigint;
  readonly compareData: bigint;
  readonly compareMask: bigint;
}

export function encodeAtomicRequest(f: AtomicRequestFields): Uint8Array {
  const out = new Uint8Array(ATOMIC_REQUEST_HEADER_SIZE);
  const v = view(out);
  const L = ATOMIC_REQUEST;
  v.setUint32(L.aopcode_word.offset, f.aopcode & 0xf); // 28 reserved bits, then AOpCode
  v.setUint32(L.request_id.offset, f.requestId >>> 0);
  v.setUint32(L.stag.offset, f.stag >>> 0);
  v.setBigUint64(L.to.offset, BigInt.asUintN(64, f.to));
  v.setBigUint64(L.add_swap.offset, BigInt.asUintN(64, f.addSwapData));
  v.setBigUint64(L.add_swap_mask.offset, BigInt.asUintN(64, f.addSwapMask));
  v.setBigUint64(L.compare.offset, BigInt.asUintN(64, f.compareData));
  v.setBigUint64(L.compare_mask.offset, BigInt.asUintN(64, f.compareMask));
  return out;
}

export function decodeAtomicRequest(b: Uint8Array): AtomicRequestFields {
  const v = view(b);
  const L = ATOMIC_REQUEST;
  return {
    aopcode: v.getUint32(L.aopcode_word.offset) & 0xf,
    requestId: v.getUint32(L.request_id.offset),
    stag: v.getUint32(L.stag.offset),
    to: v.getBigUint64(L.to.offset),
    addSwapData: v.getBigUint64(L.add_swap.offset),
    addSwapMask: v.getBigUint64(L.add_swap_mask.offset),
    compareData: v.getBigUint64(L.compare.offset),
    compareMask: v.getBigUint64(L.compare_mask.offset),
  };
}

export interface AtomicResponseFields {
  readonly requestId: number;
  /** Original Remote Data Value: the target's value before the operation. */
  readonly value: bigint;
}

export function encodeAtomicResponse(f: AtomicResponseFields): Uint8Array {
  const out = new Uint8Array(ATOMIC_RESPONSE_HEADER_SIZE);
  const v = view(out);
  v.setUint32(ATOMIC_RESPONSE.request_id.offset, f.requestId >>> 0);
  v.setBigUint64(ATOMIC_RESPONSE.value.offset, BigInt.asUintN(64, f.value));
  return out;
}

export function decodeAtomicResponse(b: Uint8Array): AtomicResponseFields {
  const v = view(b);
  return { requestId: v.getUint32(ATOMIC_RESPONSE.request_id.offset), value: v.getBigUint64(ATOMIC_RESPONSE.value.offset) };
}

export interface TerminateFields {
  readonly layer: number;
  readonly etype: number;
  readonly code: number;
  /** M: the DDP Segment Length is meaningful. */
  readonly m: boolean;
  /** D: the DDP Segment Length and the terminated DDP header are present. */
  readonly d: boolean;
  /** R: the terminated RDMA (Read Request) header is present. */
  readonly r: boolean;
  readonly segmentLength: number;
  /** The offending segment's DDP header (14 or 18 octets) when D = 1. */
  readonly ddpHeader: Uint8Array | null;
  /** The offending Read Request header (28 octets) when R = 1. */
  readonly rdmaHeader: Uint8Array | null;
}

export function encodeTerminate(f: TerminateFields): Uint8Array {
  const ddp = f.d ? f.ddpHeader ?? new Uint8Array(0) : new Uint8Array(0);
  const rdma = f.r ? f.rdmaHeader ?? new Uint8Array(READ_REQUEST_HEADER_SIZE) : new Uint8Array(0);
  const out = new Uint8Array(TERMINATE_HEADER_SIZE + (f.d ? TERM_SEGMENT_LENGTH_SIZE : 0) + ddp.length + rdma.length);
  out[0] = ((f.layer & 0xf) << 4) | (f.etype & 0xf);
  out[1] = f.code & 0xff;
  out[2] = (f.m ? TermCtrl.M : 0) | (f.d ? TermCtrl.D : 0) | (f.r ? TermCtrl.R : 0);
  let at = TERMINATE_HEADER_SIZE;
  if (f.d) {
    out[at] = (f.segmentLength >>> 8) & 0xff;
    out[at + 1] = f.segmentLength & 0xff;
    at += TERM_SEGMENT_LENGTH_SIZE;
    out.set(ddp, at);
    at += ddp.length;
  }
  out.set(rdma, at);
  return out;
}

/**
 * Decodes a Terminate header; the copied DDP header's size comes from the T bit of its own first
 * octet (spec/ddp-rdmap.md §2.4). Returns null when the octets do not hold what the bits promise.
 */
export function decodeTerminate(b: Uint8Array): TerminateFields | null {
  if (b.length < TERMINATE_HEADER_SIZE) return null;
  const ctrl = b[2]!;
  const d = (ctrl & TermCtrl.D) !== 0;
  const r = (ctrl & TermCtrl.R) !== 0;
  let at = TERMINATE_HEADER_SIZE;
  let segmentLength = 0;
  let ddpHeader: Uint8Array | null = null;
  let rdmaHeader: Uint8Array | null = null;
  if (d) {
    if (b.length < at + TERM_SEGMENT_LENGTH_SIZE + 1) return null;
    segmentLength = (b[at]! << 8) | b[at + 1]!;
    at += TERM_SEGMENT_LENGTH_SIZE;
    const size = b[at]! & 0x80 ? 14 : 18;
    if (b.length < at + size) return null;
    ddpHeader = b.slice(at, at + size);
    at += size;
  }
  if (r) {
    if (b.length < at + READ_REQUEST_HEADER_SIZE) return null;
    rdmaHeader = b.slice(at, at + READ_REQUEST_HEADER_SIZE);
    at += READ_REQUEST_HEADER_SIZE;
  }
  return { layer: b[0]! >>> 4, etype: b[0]! & 0xf, code: b[1]!, m: (ctrl & TermCtrl.M) !== 0, d, r, segmentLength, ddpHeader, rdmaHeader };
}

/** Octets a Terminate's RDMAP part occupies, given its D/R bits and copied header type. */
export function terminateLength(d: boolean, r: boolean, taggedCopy: boolean): number {
  return TERMINATE_HEADER_SIZE + (d ? TERM_SEGMENT_LENGTH_SIZE + (taggedCopy ? 14 : 18) : 0) + (r ? READ_REQUEST_HEADER_SIZE : 0);
}
