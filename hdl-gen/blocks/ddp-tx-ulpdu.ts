import { DDP_VERSION, DdpFlag, Qn, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { ATOMIC_REQUEST_HEADER_SIZE, IMMEDIATE_DATA_SIZE, Opcode, READ_REQUEST_HEADER_SIZE } from '../../ts-model/rdmap/constants';
import { Expr, cat, lit, mux } from '../core/expr';
import { ATOMIC_REQUEST, IMMEDIATE_DATA, READ_REQUEST } from '../../ts-model/wire/layouts';
import { beOctets, rdmapControlOf, untaggedHeader, wireOctets } from './rdmap-tx-resp-ulpdu';

/**
 * The octets of the requester's ULPDUs as hardware expressions, in wire order: the DDP header of
 * a Write or Send segment, and the one-segment Read Request, Immediate Data and Atomic Request.
 * Each mirrors the model: `segmentMessage` + writeDdpHeader (ts-model/ddp/segmenter.ts, header.ts),
 * encodeReadRequest / encodeAtomicRequest (ts-model/rdmap/headers.ts) as `RdmapEndpoint.post()`
 * queues them. Every field is big-endian (RFC 5041 §4, RFC 5040 §4).
 */

export interface SegmentHeaderFields {
  /** 1: tagged (RDMA Write), 0: untagged on QN 0 (the Sends). */
  readonly tagged: Expr;
  readonly last: Expr;
  readonly opcode: Expr;
  /** Tagged: the Data Sink STag; untagged: RsvdULP2, the STag to invalidate (else 0). */
  readonly stag: Expr;
  /** Tagged: the segment's TO; untagged: its MO in bits [31:0]. */
  readonly to: Expr;
  /** Untagged: the MSN of QN 0. */
  readonly msn: Expr;
}

/**
 * The DDP header of a Write segment (tagged, 14 octets: control, RsvdULP, STag, TO; RFC 5041 §4.2)
 * or a Send segment (untagged, 18 octets: control, RsvdULP, RsvdULP2, QN 0, MSN, MO; §4.3), as
 * 18 octets; the last 4 matter only when untagged.
 */
export function segmentHeader(f: SegmentHeaderFields): Expr[] {
  const ctrl = cat(f.tagged, f.last, lit(6, DDP_VERSION & DdpFlag.DV)); // T | L | Rsvd 0000 | DV
  const qnMsn = cat(lit(32, Qn.SEND), f.msn);
  const octets = [ctrl, rdmapControlOf(f.opcode), ...beOctets(f.stag), ...beOctets(mux(f.tagged, f.to, qnMsn)), ...beOctets(f.to.slice(31, 0))];
  if (octets.length !== UNTAGGED_HEADER_SIZE) throw new Error('the untagged header is 18 octets');
  return octets;
}

export interface ReadRequestFields {
  readonly sinkStag: Expr;
  readonly sinkTo: Expr;
  readonly size: Expr;
  readonly srcStag: Expr;
  readonly srcTo: Expr;
}

/** The RDMA Read Request ULPDU (RFC 5040 §4.4): QN 1, its MSN, then the 28-octet header. */
export function readRequestUlpdu(msn: Expr, f: ReadRequestFields): Expr[] {
  const body = wireOctets(READ_REQUEST, { sink_stag: f.sinkStag, sink_to: f.sinkTo, size: f.size, src_stag: f.srcStag, src_to: f.srcTo });
  if (body.length !== READ_REQUEST_HEADER_SIZE) throw new Error('the Read Request header is 28 octets');
  return [...untaggedHeader(Opcode.READ_REQUEST, Qn.READ_REQUEST, msn), ...body];
}

/** The Immediate Data ULPDU (RFC 7306 §6): QN 0, its MSN, 8 octets of data; SE when solicited. */
export function immediateUlpdu(msn: Expr, solicited: Expr, data: Expr): Expr[] {
  const opcode = mux(solicited, lit(4, Opcode.IMMEDIATE_SE), lit(4, Opcode.IMMEDIATE));
  const body = wireOctets(IMMEDIATE_DATA, { data });
  if (body.length !== IMMEDIATE_DATA_SIZE) throw new Error('Immediate Data is 8 octets');
  return [...untaggedHeader(opcode, Qn.SEND, msn), ...body];
}

export interface AtomicRequestFields {
  readonly aopcode: Expr;
  readonly requestId: Expr;
  readonly stag: Expr;
  readonly to: Expr;
  readonly addSwap: Expr;
  readonly addSwapMask: Expr;
  readonly compare: Expr;
  readonly compareMask: Expr;
}

/**
 * The Atomic Request ULPDU (RFC 7306 §5.2.1): QN 1, its MSN; 28 reserved bits and the AOpCode,
 * Request Identifier, STag, TO, Add/Swap Data and Mask, Compare Data and Mask. `last` = 0 makes it
 * the first segment of two (MULPDU < 70: see atomicRequestTail); send only MULPDU octets then.
 */
export function atomicRequestUlpdu(msn: Expr, last: Expr, f: AtomicRequestFields): Expr[] {
  const body = wireOctets(ATOMIC_REQUEST, {
    aopcode_word: cat(lit(28, 0), f.aopcode),
    request_id: f.requestId,
    stag: f.stag,
    to: f.to,
    add_swap: f.addSwap,
    add_swap_mask: f.addSwapMask,
    compare: f.compare,
    compare_mask: f.compareMask,
  });
  if (body.length !== ATOMIC_REQUEST_HEADER_SIZE) throw new Error('the Atomic Request header is 52 octets');
  const [, ...header] = untaggedHeader(Opcode.ATOMIC_REQUEST, Qn.READ_REQUEST, msn);
  return [untaggedControl(last), ...header, ...body];
}

/** The DDP control octet of an untagged segment (RFC 5041 §4.1): T 0, L, reserved 0, DV. */
const untaggedControl = (last: Expr): Expr => cat(lit(1, 0), last, lit(6, DDP_VERSION & DdpFlag.DV));

/** Octets of the Atomic Request body a second segment can need: MULPDU ≥ 64 leaves at most 52 − 46. */
export const ATOMIC_TAIL_MAX = ATOMIC_REQUEST_HEADER_SIZE - (64 - UNTAGGED_HEADER_SIZE);

/**
 * The second segment of an Atomic Request when MULPDU (`mulpdu`, 64..69) cannot carry its 52
 * octets in one (RFC 5041 §5.2, as `segmentMessage` cuts it): L, the same MSN, MO = MULPDU − 18,
 * then the body from that offset: the last 70 − MULPDU octets of Compare Mask, whose low 48 bits
 * are `compareMaskLow`. Returns the octets and the length (7 bits).
 */
export function atomicRequestTail(msn: Expr, mulpdu: Expr, compareMaskLow: Expr): { octets: Expr[]; length: Expr } {
  const room = mulpdu.sub(UNTAGGED_HEADER_SIZE);
  const header = untaggedHeader(Opcode.ATOMIC_REQUEST, Qn.READ_REQUEST, msn);
  const mo = beOctets(room.zext(32));
  const tail = beOctets(compareMaskLow); // body octets 46..51
  const first = ATOMIC_REQUEST_HEADER_SIZE - tail.length;
  // Payload octet i is body octet room + i: tail[room − 46 + i], for room in 46..51.
  const payload = Array.from({ length: ATOMIC_TAIL_MAX }, (_, i) => {
    let o: Expr = lit(8, 0);
    for (let rm = first; rm < ATOMIC_REQUEST_HEADER_SIZE; rm++) {
      const at = rm - first + i;
      if (at < tail.length) o = mux(room.eq(rm), tail[at]!, o);
    }
    return o;
  });
  const length = lit(7, UNTAGGED_HEADER_SIZE + ATOMIC_REQUEST_HEADER_SIZE).sub(room.slice(6, 0));
  return { octets: [...header.slice(0, 14), ...mo, ...payload], length };
}
