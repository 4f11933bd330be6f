/**
 * MPA wire constants (RFC 5044 as updated by RFC 6581; spec/mpa.md §1). Every number the MPA
 * code needs is named here, as siw's `iwarp.h` does for the kernel.
 */

/** ULPDU_Length field, big-endian (spec/mpa.md §2). */
export const ULPDU_LENGTH_SIZE = 2;
/** CRC field, always present, least-significant octet first (spec/mpa.md §2, §3.2). */
export const CRC_SIZE = 4;
/** A marker: Reserved(16) = 0, FPDUPTR(16) (spec/mpa.md §4.1). */
export const MARKER_SIZE = 4;
/** Markers sit every 512 octets of TCP sequence space from S0 (spec/mpa.md §4.3). */
export const MARKER_PERIOD = 512;
/** FPDUs, CRC fields and markers are 4-aligned relative to S0 (spec/mpa.md §4.5). */
export const FPDU_ALIGN = 4;
/** ULPDU_Length is 16 bits. */
export const MAX_ULPDU_LENGTH = 0xffff;

/** "MPA ID Req Frame" [RFC 6581 §6]. */
export const MPA_REQUEST_KEY: Uint8Array = new TextEncoder().encode('MPA ID Req Frame');
/** "MPA ID Rep Frame" [RFC 6581 §6]. */
export const MPA_REPLY_KEY: Uint8Array = new TextEncoder().encode('MPA ID Rep Frame');
export const MPA_KEY_SIZE = 16;
/** Key[16], flags[1], Rev[1], PD_Length[2] [RFC 6581 §6]. */
export const MPA_FRAME_HEADER_SIZE = 20;
/** Private Data limit, including the enhanced word [RFC 6581 §7, §9]. */
export const MPA_MAX_PRIVATE_DATA = 512;

/** Octet 16 of a Request/Reply [RFC 6581 §6]. */
export const MpaFlag = Object.freeze({
  /** The sender wants markers in what it receives. */
  M: 0x80,
  /** The sender wants CRC-32C. */
  C: 0x40,
  /** Reply: the ULP rejected the connection. */
  R: 0x20,
  /** Private Data starts with the RFC 6581 enhanced word. */
  S: 0x10,
  /** Reserved: sent 0, not checked. */
  RES: 0x0f,
});

/** Rev octet values [RFC 6581 §6]. */
export const MpaRevision = Object.freeze({ RFC5044: 1, RFC6581: 2 });

/** RFC 6581 §9 enhanced word: A, B | IRD(14) then C, D | ORD(14), big-endian. */
export const ENHANCED_WORD_SIZE = 4;
export const EnhancedFlag = Object.freeze({
  /** word0: peer-to-peer model. */
  A: 0x8000,
  /** word0: zero-length Send RTR. */
  B: 0x4000,
  /** word1: zero-length RDMA Write RTR. */
  C: 0x8000,
  /** word1: zero-length RDMA Read RTR. */
  D: 0x4000,
});
export const IRD_ORD_MASK = 0x3fff;
/** IRD or ORD = 0x3FFF: no automatic negotiation [RFC 6581 §9.1]. */
export const IRD_ORD_NO_NEGOTIATE = 0x3fff;

/** Terminate Layer for LLP errors and EType for MPA (spec/mpa.md §1; RFC 6580 §3.3). */
export const LAYER_LLP = 0x2;
export const ETYPE_MPA = 0x0;

/** MPA error codes, Terminate 0x2/0x0/code (spec/mpa.md §6). */
export const MpaErrorCode = Object.freeze({
  /** TCP connection closed, terminated or lost (local report only). */
  TCP_CLOSED: 0x01,
  /** Received MPA CRC does not match computed CRC. */
  CRC_MISMATCH: 0x02,
  /** Marker and ULPDU_Length pointers disagree (also: ULPDU_Length over the accepted maximum). */
  MARKER_MISMATCH: 0x03,
  /** Invalid MPA Request or Reply frame. */
  INVALID_REQ_REP: 0x04,
  /** Local catastrophic error (enhanced setup) [RFC 6581 §8]. */
  LOCAL_CATASTROPHIC: 0x05,
  /** Insufficient IRD resources [RFC 6581 §8]. */
  INSUFFICIENT_IRD: 0x06,
  /** No matching RTR option [RFC 6581 §8]. */
  NO_MATCHING_RTR: 0x07,
});
export type MpaErrorCode = (typeof MpaErrorCode)[keyof typeof MpaErrorCode];
