import { DDP_VERSION } from '../ddp/constants';
import { decodeDdpHeader, headerSize, type DdpHeader } from '../ddp/header';
import type { TaggedFault } from '../memory/stag-table';
import {
  ATOMIC_REQUEST_HEADER_SIZE,
  ATOMIC_RESPONSE_HEADER_SIZE,
  IMMEDIATE_DATA_SIZE,
  Opcode,
  RDMAP_VERSION,
  READ_REQUEST_HEADER_SIZE,
  TERMINATE_HEADER_SIZE,
  TermCtrl,
  isExtensionOpcode,
  isTaggedOpcode,
  rdmapOpcode,
  rdmapVersion,
} from '../rdmap/constants';
import { terminateLength } from '../rdmap/headers';
import { DdpError, LlpError, RdmapError, type ErrorCode } from '../terminate-codes';
import type { RdmapOptions } from './options';

/** A ULPDU that passed the header checks: its decoded DDP header and what follows it. */
export interface CheckedSegment {
  readonly ulpdu: Uint8Array;
  readonly header: DdpHeader;
  readonly opcode: number;
  /** DDP payload: the RDMAP header (if any) and ULP data. */
  readonly payload: Uint8Array;
}

export type HeaderCheck =
  | { readonly ok: true; readonly segment: CheckedSegment }
  | { readonly ok: false; readonly error: ErrorCode; readonly reason: string; readonly header: DdpHeader | null; readonly opcode: number | null };

const UNTAGGED = 18;

/** Octets of RDMAP header an untagged opcode needs after the DDP header, and whether ULP data may follow. */
function untaggedShape(opcode: number): { readonly fixed: number; readonly dataAllowed: boolean } {
  switch (opcode) {
    case Opcode.READ_REQUEST:
      return { fixed: READ_REQUEST_HEADER_SIZE, dataAllowed: false };
    case Opcode.TERMINATE:
      return { fixed: TERMINATE_HEADER_SIZE, dataAllowed: false };
    case Opcode.IMMEDIATE:
    case Opcode.IMMEDIATE_SE:
      return { fixed: IMMEDIATE_DATA_SIZE, dataAllowed: false };
    case Opcode.ATOMIC_REQUEST:
      return { fixed: ATOMIC_REQUEST_HEADER_SIZE, dataAllowed: false };
    case Opcode.ATOMIC_RESPONSE:
      return { fixed: ATOMIC_RESPONSE_HEADER_SIZE, dataAllowed: false };
    default:
      return { fixed: 0, dataAllowed: true };
  }
}

/**
 * Header checks H1–H7 on every segment, in the project's order (spec/ddp-rdmap.md §5.1); H8
 * (continuation) needs the stream's state and runs in the endpoint.
 */
function fail(error: ErrorCode, reason: string, header: DdpHeader | null = null, opcode: number | null = null): HeaderCheck {
  return { ok: false, error, reason, header, opcode };
}

export function checkHeader(ulpdu: Uint8Array, options: RdmapOptions): HeaderCheck {
  // H1: a whole DDP header (its size comes from the T bit).
  const header = decodeDdpHeader(ulpdu);
  if (!header) return fail(LlpError.MARKER, `ULPDU_Length ${ulpdu.length} is shorter than the DDP header`);
  const opcode = rdmapOpcode(header.rsvdUlp);
  // H2: DDP version.
  if (header.dv !== DDP_VERSION) {
    return fail(header.tagged ? DdpError.TAGGED_VERSION : DdpError.UNTAGGED_VERSION, `DDP version ${header.dv}`, header, opcode);
  }
  // H3: RDMAP version.
  const rv = rdmapVersion(header.rsvdUlp);
  if (rv !== RDMAP_VERSION) return fail(RdmapError.INVALID_VERSION, `RDMAP version ${rv}`, header, opcode);
  // H4: a defined opcode (0x8–0xB only with RFC 7306).
  if (opcode > Opcode.ATOMIC_RESPONSE || (isExtensionOpcode(opcode) && !options.rfc7306)) {
    return fail(RdmapError.UNEXPECTED_OPCODE, `opcode 0x${opcode.toString(16)}`, header, opcode);
  }
  // H5: the T bit matches the opcode.
  if (header.tagged !== isTaggedOpcode(opcode)) {
    return fail(RdmapError.UNEXPECTED_OPCODE, `opcode 0x${opcode.toString(16)} with T = ${header.tagged ? 1 : 0}`, header, opcode);
  }
  const payload = ulpdu.subarray(headerSize(header.tagged));
  if (!header.tagged) {
    const shape = untaggedShape(opcode);
    // H6: the opcode's fixed part is all there (a short one is a length fault, like H1).
    if (payload.length < shape.fixed) {
      return fail(LlpError.MARKER, `ULPDU_Length ${ulpdu.length} is shorter than the ${UNTAGGED + shape.fixed} octets of opcode 0x${opcode.toString(16)}`, header, opcode);
    }
    // H7: nothing beyond it where no data is allowed; a Terminate's length follows its D/R bits.
    let allowed = shape.dataAllowed ? Infinity : shape.fixed;
    if (opcode === Opcode.TERMINATE) {
      const ctrl = payload[2]!;
      const d = (ctrl & TermCtrl.D) !== 0;
      const taggedCopy = d && payload.length > 6 && (payload[6]! & 0x80) !== 0;
      allowed = terminateLength(d, (ctrl & TermCtrl.R) !== 0, taggedCopy);
      if (payload.length < allowed) return fail(LlpError.MARKER, `Terminate of ${payload.length} octets, its D/R bits need ${allowed}`, header, opcode);
    }
    if (payload.length > allowed) {
      return fail(DdpError.TOO_LONG, `${payload.length - allowed} octets beyond the fixed size of opcode 0x${opcode.toString(16)}`, header, opcode);
    }
  }
  return { ok: true, segment: { ulpdu, header, opcode, payload } };
}

/** Tagged-buffer faults on placement (T1–T5) as DDP errors [RFC 5041 §7.2; spec/ddp-rdmap.md §5.3]. */
export function ddpTaggedError(fault: TaggedFault): ErrorCode {
  switch (fault) {
    case 'invalid-stag':
    case 'access': // RFC 5041 has no access-rights code; Invalid STag is the closest (siw)
      return DdpError.INVALID_STAG;
    case 'pd-mismatch':
      return DdpError.STAG_NOT_ASSOCIATED;
    case 'to-wrap':
      return DdpError.TO_WRAP;
    case 'bounds':
      return DdpError.BASE_BOUNDS;
  }
}

/** Data Source faults of a Read or Atomic Request as RDMAP Remote Protection errors (spec/ddp-rdmap.md §5.5). */
export function rdmapProtectionError(fault: TaggedFault): ErrorCode {
  switch (fault) {
    case 'invalid-stag':
      return RdmapError.INVALID_STAG;
    case 'pd-mismatch':
      return RdmapError.STAG_NOT_ASSOCIATED;
    case 'access':
      return RdmapError.ACCESS_RIGHTS;
    case 'to-wrap':
      return RdmapError.TO_WRAP;
    case 'bounds':
      return RdmapError.BASE_BOUNDS;
  }
}
