import { DDP_VERSION, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from './constants';
import { writeDdpHeader } from './header';
import { allocateBytes } from '../util/slab';

/**
 * DDP segmentation at the data source [RFC 5041 §5.2; spec/ddp-rdmap.md §4]: header + payload of
 * every segment ≤ MULPDU; L = 1 on the last; a zero-length message is one segment; tagged
 * segments carry TO = starting TO + offset, untagged ones MO = offset in the message.
 */

export interface TaggedMessage {
  readonly tagged: true;
  readonly rsvdUlp: number;
  readonly stag: number;
  readonly to: bigint;
  readonly payload: Uint8Array;
}

export interface UntaggedMessage {
  readonly tagged: false;
  readonly rsvdUlp: number;
  readonly rsvdUlp2: number;
  readonly qn: number;
  readonly msn: number;
  /** The DDP payload: an RDMAP header (if any) followed by ULP data. */
  readonly payload: Uint8Array;
}

export type DdpMessage = TaggedMessage | UntaggedMessage;

export function segmentMessage(msg: DdpMessage, mulpdu: number): Uint8Array[] {
  const header = msg.tagged ? TAGGED_HEADER_SIZE : UNTAGGED_HEADER_SIZE;
  const room = mulpdu - header;
  if (room < 1) throw new RangeError(`MULPDU ${mulpdu} cannot carry a ${header}-octet DDP header and any payload`);
  const total = msg.payload.length;
  const segments: Uint8Array[] = [];
  let offset = 0;
  do {
    const n = Math.min(room, total - offset);
    const last = offset + n === total;
    const seg = allocateBytes(header + n);
    if (msg.tagged) {
      writeDdpHeader(seg, 0, { tagged: true, last, dv: DDP_VERSION, rsvdUlp: msg.rsvdUlp, stag: msg.stag, to: BigInt.asUintN(64, msg.to + BigInt(offset)) });
    } else {
      writeDdpHeader(seg, 0, { tagged: false, last, dv: DDP_VERSION, rsvdUlp: msg.rsvdUlp, rsvdUlp2: msg.rsvdUlp2, qn: msg.qn, msn: msg.msn, mo: offset });
    }
    seg.set(msg.payload.subarray(offset, offset + n), header);
    segments.push(seg);
    offset += n;
  } while (offset < total);
  return segments;
}
