import { DDP_TAGGED, DDP_UNTAGGED } from '../wire/layouts';
import { DdpFlag, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from './constants';

/**
 * DDP segment headers [RFC 5041 §4.2, §4.3; spec/ddp-rdmap.md §1.2, §1.3]. The RsvdULP octet at
 * D+1 belongs to the ULP (the RDMAP control octet); this layer carries it as a number.
 */
export interface TaggedHeader {
  readonly tagged: true;
  readonly last: boolean;
  readonly dv: number;
  /** D+1: RDMAP control octet. */
  readonly rsvdUlp: number;
  readonly stag: number;
  readonly to: bigint;
}

export interface UntaggedHeader {
  readonly tagged: false;
  readonly last: boolean;
  readonly dv: number;
  readonly rsvdUlp: number;
  /** D+2..5: RsvdULP[8:39], the Invalidate STag for Send with Invalidate. */
  readonly rsvdUlp2: number;
  readonly qn: number;
  readonly msn: number;
  readonly mo: number;
}

export type DdpHeader = TaggedHeader | UntaggedHeader;

/** Big-endian 32-bit field (every DDP field is big-endian, RFC 5041 §4). */
const be32 = (b: Uint8Array, at: number): number => ((b[at]! << 24) | (b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!) >>> 0;

export const headerSize = (tagged: boolean): number => (tagged ? TAGGED_HEADER_SIZE : UNTAGGED_HEADER_SIZE);

/** Decodes the header at the start of a ULPDU; null when the ULPDU is shorter than it (check H1). */
export function decodeDdpHeader(ulpdu: Uint8Array): DdpHeader | null {
  if (ulpdu.length < 1) return null;
  const ctrl = ulpdu[0]!;
  const tagged = (ctrl & DdpFlag.T) !== 0;
  if (ulpdu.length < headerSize(tagged)) return null;
  const last = (ctrl & DdpFlag.L) !== 0;
  const version = ctrl & DdpFlag.DV;
  const rsvdUlp = ulpdu[DDP_TAGGED.rsvd_ulp.offset]!;
  if (tagged) {
    const to = (BigInt(be32(ulpdu, DDP_TAGGED.to.offset)) << 32n) | BigInt(be32(ulpdu, DDP_TAGGED.to.offset + 4));
    return { tagged, last, dv: version, rsvdUlp, stag: be32(ulpdu, DDP_TAGGED.stag.offset), to };
  }
  const U = DDP_UNTAGGED;
  return { tagged, last, dv: version, rsvdUlp, rsvdUlp2: be32(ulpdu, U.rsvd_ulp2.offset), qn: be32(ulpdu, U.qn.offset), msn: be32(ulpdu, U.msn.offset), mo: be32(ulpdu, U.mo.offset) };
}

/** Writes `h` into `out` at `at` (header only); returns the header size. */
export function writeDdpHeader(out: Uint8Array, at: number, h: DdpHeader): number {
  const view = new DataView(out.buffer, out.byteOffset + at, headerSize(h.tagged));
  view.setUint8(DDP_TAGGED.ctrl.offset, (h.tagged ? DdpFlag.T : 0) | (h.last ? DdpFlag.L : 0) | (h.dv & DdpFlag.DV));
  view.setUint8(DDP_TAGGED.rsvd_ulp.offset, h.rsvdUlp);
  if (h.tagged) {
    view.setUint32(DDP_TAGGED.stag.offset, h.stag >>> 0);
    view.setBigUint64(DDP_TAGGED.to.offset, BigInt.asUintN(64, h.to));
    return TAGGED_HEADER_SIZE;
  }
  view.setUint32(DDP_UNTAGGED.rsvd_ulp2.offset, h.rsvdUlp2 >>> 0);
  view.setUint32(DDP_UNTAGGED.qn.offset, h.qn >>> 0);
  view.setUint32(DDP_UNTAGGED.msn.offset, h.msn >>> 0);
  view.setUint32(DDP_UNTAGGED.mo.offset, h.mo >>> 0);
  return UNTAGGED_HEADER_SIZE;
}

/** A DDP segment: header followed by `payload` (which may itself start with an RDMAP header). */
export function encodeDdpSegment(h: DdpHeader, payload: Uint8Array): Uint8Array {
  const size = headerSize(h.tagged);
  const out = new Uint8Array(size + payload.length);
  writeDdpHeader(out, 0, h);
  out.set(payload, size);
  return out;
}

