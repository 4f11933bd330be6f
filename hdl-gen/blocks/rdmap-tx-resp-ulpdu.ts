import { DDP_VERSION, DdpFlag, Qn, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import {
  ATOMIC_RESPONSE_HEADER_SIZE,
  Opcode,
  READ_REQUEST_HEADER_SIZE,
  TERM_SEGMENT_LENGTH_SIZE,
  TERMINATE_HEADER_SIZE,
  TermCtrl,
  rdmapControl,
} from '../../ts-model/rdmap/constants';
import { ATOMIC_RESPONSE, DDP_TAGGED, DDP_UNTAGGED, TERMINATE, type WireField, type WireLayout } from '../../ts-model/wire/layouts';
import { Expr, cat, lit, mux } from '../core/expr';

/**
 * The octets of the responder's fixed-size ULPDUs as hardware expressions, in wire order (index 0
 * is the first octet on the wire): the tagged Read Response header, the Atomic Response and the
 * Terminate. Each mirrors a model function: writeDdpHeader (ts-model/ddp/header.ts),
 * encodeAtomicResponse and encodeTerminate (ts-model/rdmap/headers.ts), and the Terminate of
 * `fail()` in ts-model/rnic/endpoint.ts. Every DDP and RDMAP field is big-endian (RFC 5041 §4,
 * RFC 5040 §4).
 */

const octet = (v: number): Expr => lit(8, v);

/** The octets of `v` (a whole number of octets), most significant first: a big-endian field. */
export function beOctets(v: Expr): Expr[] {
  const n = v.width / 8;
  return Array.from({ length: n }, (_, i) => v.slice(v.width - 1 - 8 * i, v.width - 8 - 8 * i));
}

/**
 * The octets of a header in wire order from its fields by name, in the order and sizes of its
 * wire layout (ts-model/wire/layouts.ts, the table the model's codecs use): a field of n octets
 * takes an 8n-bit value, or 8 bits for a one-octet field.
 */
export function wireOctets<F extends string>(layout: WireLayout<F>, values: { readonly [K in F]: Expr }): Expr[] {
  const fields = (Object.entries(layout) as [string, WireField | number][]).filter((e): e is [F, WireField] => typeof e[1] === 'object').sort(([, a], [, b]) => a.offset - b.offset);
  return fields.flatMap(([name, f]) => {
    const v = values[name];
    if (v.width !== 8 * f.size) throw new Error(`wire field ${name} is ${f.size} octets, given ${v.width} bits`);
    return beOctets(v);
  });
}

/** The vector whose lane j (bits [8j+7:8j]) is octets[j]: wire order to AXI4-Stream lanes. */
export function laneVector(octets: readonly Expr[]): Expr {
  return cat(...[...octets].reverse());
}

/** The octets of a lane vector, lane 0 first. */
export function lanesOf(v: Expr): Expr[] {
  return Array.from({ length: v.width / 8 }, (_, j) => v.slice(8 * j + 7, 8 * j));
}

/**
 * The tagged DDP header of an RDMA Read Response segment (RFC 5041 §4.2; spec/ddp-rdmap.md §1.2):
 * T = 1, L on the last segment, DV 1; the RDMAP control octet of Read Response; STag; TO.
 */
export function readResponseHeader(last: Expr, stag: Expr, to: Expr): Expr[] {
  const ctrl = cat(lit(1, 1), last, lit(6, DDP_VERSION & DdpFlag.DV)); // T | L | Rsvd 0000 | DV
  const octets = wireOctets(DDP_TAGGED, { ctrl, rsvd_ulp: octet(rdmapControl(Opcode.READ_RESPONSE)), stag, to });
  if (octets.length !== TAGGED_HEADER_SIZE) throw new Error('tagged header is 14 octets');
  return octets;
}

/** The RDMAP control octet (RFC 5040 §4.2) of a run-time 4-bit opcode: RV = 1, reserved 0, OpCode. */
export const rdmapControlOf = (opcode: Expr): Expr => cat(lit(4, rdmapControl(0) >> 4), opcode);

/**
 * The untagged DDP header of a one-segment message (L = 1, RsvdULP[8:39] = 0, MO 0; §1.3). The
 * opcode may be an expression (4 bits) when the message's kind is chosen at run time.
 */
export function untaggedHeader(opcode: number | Expr, qn: number, msn: Expr): Expr[] {
  const octets = wireOctets(DDP_UNTAGGED, {
    ctrl: octet(DdpFlag.L | DDP_VERSION),
    rsvd_ulp: typeof opcode === 'number' ? octet(rdmapControl(opcode)) : rdmapControlOf(opcode),
    rsvd_ulp2: lit(32, 0),
    qn: lit(32, qn),
    msn,
    mo: lit(32, 0),
  });
  if (octets.length !== UNTAGGED_HEADER_SIZE) throw new Error('untagged header is 18 octets');
  return octets;
}

/** The Atomic Response ULPDU (RFC 7306 §5.2.2): QN 3, its MSN, Request Identifier, original value. */
export function atomicResponseUlpdu(msn: Expr, requestId: Expr, orig: Expr): Expr[] {
  const body = wireOctets(ATOMIC_RESPONSE, { request_id: requestId, value: orig });
  if (body.length !== ATOMIC_RESPONSE_HEADER_SIZE) throw new Error('Atomic Response header is 12 octets');
  return [...untaggedHeader(Opcode.ATOMIC_RESPONSE, Qn.ATOMIC_RESPONSE, msn), ...body];
}

export interface TerminateFields {
  readonly layer: Expr;
  readonly etype: Expr;
  readonly code: Expr;
  readonly m: Expr;
  readonly d: Expr;
  readonly r: Expr;
  readonly segLen: Expr;
  /** The copied DDP header is tagged (14 octets), else untagged (18). */
  readonly tagged: Expr;
  /** 18 octets, lane j = octet j (only the first 14 when tagged). */
  readonly ddpHeader: Expr;
  /** 28 octets, lane j = octet j. */
  readonly rdmaHeader: Expr;
}

/** The longest Terminate ULPDU: D with an untagged copy, and R. */
export const TERMINATE_ULPDU_MAX = UNTAGGED_HEADER_SIZE + TERMINATE_HEADER_SIZE + TERM_SEGMENT_LENGTH_SIZE + UNTAGGED_HEADER_SIZE + READ_REQUEST_HEADER_SIZE;

/**
 * The Terminate ULPDU (RFC 5040 §4.8; spec/ddp-rdmap.md §2.4): QN 2, its MSN; Layer|EType, Code,
 * M D R, a reserved octet; the DDP Segment Length and the copied DDP header iff D; the copied RDMA
 * header iff R, right after whatever precedes it. Returns TERMINATE_ULPDU_MAX octets (those past
 * `length` are don't-care) and the length in octets (7 bits).
 */
export function terminateUlpdu(msn: Expr, f: TerminateFields): { octets: Expr[]; length: Expr } {
  const head = [
    ...untaggedHeader(Opcode.TERMINATE, Qn.TERMINATE, msn),
    ...wireOctets(TERMINATE, { layer_etype: cat(f.layer, f.etype), code: f.code, flags: cat(f.m, f.d, f.r, lit(13, 0)) }),
  ];
  if (TermCtrl.M !== 0x80 || TermCtrl.D !== 0x40 || TermCtrl.R !== 0x20) throw new Error('Terminate control bits moved');
  const rdma = lanesOf(f.rdmaHeader);
  const ddp = lanesOf(f.ddpHeader);
  // The three layouts: no copy; a tagged copy (14 octets); an untagged copy (18 octets).
  const noCopy = [...head, ...rdma];
  const withCopy = (size: number) => [...head, ...beOctets(f.segLen), ...ddp.slice(0, size), ...rdma];
  const tagged = withCopy(TAGGED_HEADER_SIZE);
  const untagged = withCopy(UNTAGGED_HEADER_SIZE);
  if (untagged.length !== TERMINATE_ULPDU_MAX) throw new Error('the untagged copy with R is the longest Terminate');
  // Past a layout's end an octet is don't-care (its lane's tkeep is 0): it takes the value of a
  // longer layout there, so it costs no mux; neither does an octet two layouts share.
  const pick = (sel: Expr, a: Expr | undefined, b: Expr): Expr => (a && a !== b ? mux(sel, a, b) : b);
  const octets = untagged.map((u, i) => {
    const copy = pick(f.tagged, tagged[i], u);
    return i < noCopy.length ? mux(f.d, copy, noCopy[i]!) : copy;
  });
  const copy = mux(f.d, mux(f.tagged, lit(7, TERM_SEGMENT_LENGTH_SIZE + TAGGED_HEADER_SIZE), lit(7, TERM_SEGMENT_LENGTH_SIZE + UNTAGGED_HEADER_SIZE)), lit(7, 0));
  const length = lit(7, head.length).add(copy).add(mux(f.r, lit(7, READ_REQUEST_HEADER_SIZE), lit(7, 0)));
  return { octets, length };
}
