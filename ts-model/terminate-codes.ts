/**
 * Terminate Layer / Error Type / Error Code triples (RFC 5040 §4.8, RFC 5041 §7.2, RFC 5044 and
 * RFC 6581 §8; IANA registries of RFC 6580; spec/ddp-rdmap.md §9). Every error the model raises is
 * one of these, by name.
 */
export interface ErrorCode {
  /** 0 RDMAP, 1 DDP, 2 LLP (MPA). */
  readonly layer: 0 | 1 | 2;
  readonly etype: number;
  readonly code: number;
  readonly name: string;
}

const c = (layer: 0 | 1 | 2, etype: number, code: number, name: string): ErrorCode => Object.freeze({ layer, etype, code, name });

export const Layer = Object.freeze({ RDMAP: 0, DDP: 1, LLP: 2 } as const);

/** RDMAP, Layer 0x0 [RFC 5040 §4.8]. */
export const RdmapError = Object.freeze({
  LOCAL_CATASTROPHIC: c(0, 0x0, 0x00, 'RDMAP local catastrophic'),
  INVALID_STAG: c(0, 0x1, 0x00, 'RDMAP remote protection: invalid STag'),
  BASE_BOUNDS: c(0, 0x1, 0x01, 'RDMAP remote protection: base or bounds violation'),
  ACCESS_RIGHTS: c(0, 0x1, 0x02, 'RDMAP remote protection: access rights violation'),
  STAG_NOT_ASSOCIATED: c(0, 0x1, 0x03, 'RDMAP remote protection: STag not associated with RDMAP stream'),
  TO_WRAP: c(0, 0x1, 0x04, 'RDMAP remote protection: TO wrap'),
  PROTECTION_CANNOT_INVALIDATE: c(0, 0x1, 0x09, 'RDMAP remote protection: STag cannot be invalidated'),
  INVALID_VERSION: c(0, 0x2, 0x05, 'RDMAP remote operation: invalid RDMAP version'),
  UNEXPECTED_OPCODE: c(0, 0x2, 0x06, 'RDMAP remote operation: unexpected OpCode'),
  STREAM_CATASTROPHIC: c(0, 0x2, 0x07, 'RDMAP remote operation: catastrophic error, localized to RDMAP stream'),
  GLOBAL_CATASTROPHIC: c(0, 0x2, 0x08, 'RDMAP remote operation: catastrophic error, global'),
  OPERATION_CANNOT_INVALIDATE: c(0, 0x2, 0x09, 'RDMAP remote operation: STag cannot be invalidated'),
});

/** DDP, Layer 0x1 [RFC 5041 §7.2]. */
export const DdpError = Object.freeze({
  LOCAL_CATASTROPHIC: c(1, 0x0, 0x00, 'DDP local catastrophic'),
  INVALID_STAG: c(1, 0x1, 0x00, 'DDP tagged buffer: invalid STag'),
  BASE_BOUNDS: c(1, 0x1, 0x01, 'DDP tagged buffer: base or bounds violation'),
  STAG_NOT_ASSOCIATED: c(1, 0x1, 0x02, 'DDP tagged buffer: STag not associated with DDP stream'),
  TO_WRAP: c(1, 0x1, 0x03, 'DDP tagged buffer: TO wrap'),
  TAGGED_VERSION: c(1, 0x1, 0x04, 'DDP tagged buffer: invalid DDP version'),
  INVALID_QN: c(1, 0x2, 0x01, 'DDP untagged buffer: invalid QN'),
  NO_BUFFER: c(1, 0x2, 0x02, 'DDP untagged buffer: invalid MSN, no buffer available'),
  MSN_RANGE: c(1, 0x2, 0x03, 'DDP untagged buffer: invalid MSN, MSN range is not valid'),
  INVALID_MO: c(1, 0x2, 0x04, 'DDP untagged buffer: invalid MO'),
  TOO_LONG: c(1, 0x2, 0x05, 'DDP untagged buffer: DDP message too long for available buffer'),
  UNTAGGED_VERSION: c(1, 0x2, 0x06, 'DDP untagged buffer: invalid DDP version'),
});

/** LLP, Layer 0x2, EType 0x0 = MPA (spec/mpa.md §6). */
export const LlpError = Object.freeze({
  TCP_CLOSED: c(2, 0x0, 0x01, 'MPA: TCP connection closed, terminated or lost'),
  CRC: c(2, 0x0, 0x02, 'MPA: CRC error'),
  MARKER: c(2, 0x0, 0x03, 'MPA: marker and ULPDU_Length mismatch'),
  INVALID_REQ_REP: c(2, 0x0, 0x04, 'MPA: invalid Request or Reply frame'),
  LOCAL_CATASTROPHIC: c(2, 0x0, 0x05, 'MPA: local catastrophic'),
  INSUFFICIENT_IRD: c(2, 0x0, 0x06, 'MPA: insufficient IRD resources'),
  NO_MATCHING_RTR: c(2, 0x0, 0x07, 'MPA: no matching RTR option'),
});

export const ALL_ERROR_CODES: readonly ErrorCode[] = Object.freeze([
  ...Object.values(RdmapError),
  ...Object.values(DdpError),
  ...Object.values(LlpError),
]);

export function llpError(code: number): ErrorCode {
  const e = Object.values(LlpError).find((x) => x.code === code);
  if (!e) throw new RangeError(`no LLP error code 0x${code.toString(16)}`);
  return e;
}

export const formatErrorCode = (e: { layer: number; etype: number; code: number }): string =>
  `0x${e.layer.toString(16)}/0x${e.etype.toString(16)}/0x${e.code.toString(16).padStart(2, '0')}`;
