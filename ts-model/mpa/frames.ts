import {
  ENHANCED_WORD_SIZE,
  EnhancedFlag,
  IRD_ORD_MASK,
  MPA_FRAME_HEADER_SIZE,
  MPA_KEY_SIZE,
  MPA_MAX_PRIVATE_DATA,
  MPA_REPLY_KEY,
  MPA_REQUEST_KEY,
  MpaErrorCode,
  MpaFlag,
  MpaRevision,
} from './constants';

/**
 * MPA Request and Reply frames (RFC 6581 §6, §9; spec/mpa.md §7, §8):
 *
 *   Key[16] | M C R S Res(4) | Rev | PD_Length(16, BE) | Private Data
 *
 * With S = 1 the Private Data starts with the enhanced word |A|B|IRD(14)|C|D|ORD(14)|.
 */

export type MpaFrameKind = 'request' | 'reply';

/** RFC 6581 §9 enhanced connection data. */
export interface EnhancedData {
  /** A: peer-to-peer model. */
  readonly peerToPeer: boolean;
  /** B: zero-length Send RTR. */
  readonly rtrSend: boolean;
  /** C: zero-length RDMA Write RTR. */
  readonly rtrWrite: boolean;
  /** D: zero-length RDMA Read RTR. */
  readonly rtrRead: boolean;
  /** 14 bits; 0x3FFF = do not negotiate. */
  readonly ird: number;
  readonly ord: number;
}

export interface MpaFrame {
  readonly kind: MpaFrameKind;
  /** M: the sender wants markers in what it receives. */
  readonly markers: boolean;
  /** C: the sender wants CRC-32C. */
  readonly crc: boolean;
  /** R: Reply only, the ULP rejected the connection. */
  readonly reject: boolean;
  readonly revision: number;
  /** Present exactly when S = 1. */
  readonly enhanced: EnhancedData | null;
  /** The ULP's Private Data (after the enhanced word, if any). */
  readonly privateData: Uint8Array;
}

export function mpaFrameLength(frame: MpaFrame): number {
  return MPA_FRAME_HEADER_SIZE + (frame.enhanced ? ENHANCED_WORD_SIZE : 0) + frame.privateData.length;
}

export function encodeMpaFrame(frame: MpaFrame): Uint8Array {
  const pdLength = (frame.enhanced ? ENHANCED_WORD_SIZE : 0) + frame.privateData.length;
  if (pdLength > MPA_MAX_PRIVATE_DATA) {
    throw new RangeError(`PD_Length ${pdLength} exceeds ${MPA_MAX_PRIVATE_DATA} (RFC 6581 §7)`);
  }
  if (frame.enhanced && frame.revision < MpaRevision.RFC6581) {
    throw new RangeError(`the enhanced word (S = 1) needs Rev >= 2, got Rev ${frame.revision} (RFC 6581 §6)`);
  }
  if (!Number.isInteger(frame.revision) || frame.revision < 0 || frame.revision > 0xff) {
    throw new RangeError(`Rev must be an octet, got ${frame.revision}`);
  }
  const out = new Uint8Array(MPA_FRAME_HEADER_SIZE + pdLength);
  out.set(frame.kind === 'request' ? MPA_REQUEST_KEY : MPA_REPLY_KEY, 0);
  out[16] =
    (frame.markers ? MpaFlag.M : 0) |
    (frame.crc ? MpaFlag.C : 0) |
    (frame.reject ? MpaFlag.R : 0) |
    (frame.enhanced ? MpaFlag.S : 0);
  out[17] = frame.revision;
  out[18] = pdLength >>> 8;
  out[19] = pdLength & 0xff;
  let at = MPA_FRAME_HEADER_SIZE;
  if (frame.enhanced) {
    const e = frame.enhanced;
    checkIrdOrd('IRD', e.ird);
    checkIrdOrd('ORD', e.ord);
    const word0 = (e.peerToPeer ? EnhancedFlag.A : 0) | (e.rtrSend ? EnhancedFlag.B : 0) | e.ird;
    const word1 = (e.rtrWrite ? EnhancedFlag.C : 0) | (e.rtrRead ? EnhancedFlag.D : 0) | e.ord;
    out.set([word0 >>> 8, word0 & 0xff, word1 >>> 8, word1 & 0xff], at);
    at += ENHANCED_WORD_SIZE;
  }
  out.set(frame.privateData, at);
  return out;
}

function checkIrdOrd(name: string, v: number): void {
  if (!Number.isInteger(v) || v < 0 || v > IRD_ORD_MASK) throw new RangeError(`${name} must be 0..0x3FFF, got ${v}`);
}

export type ParseResult =
  | { readonly status: 'incomplete'; readonly need: number }
  | { readonly status: 'ok'; readonly frame: MpaFrame; readonly length: number }
  | {
      readonly status: 'invalid';
      /** 0x04: invalid MPA Request or Reply frame; close TCP, report locally (spec/mpa.md §7.5). */
      readonly code: typeof MpaErrorCode.INVALID_REQ_REP;
      readonly field: 'key' | 'rev' | 'pd_length' | 's';
      readonly reason: string;
    };

/**
 * Parses the frame at the start of `buf`, as the stream delivers it: 'incomplete' until the whole
 * frame is there, 'invalid' (code 0x04) as soon as the octets at hand prove it malformed. The
 * Reserved bits and a Request's R bit are not checked (RFC 6581 §6).
 */
export function parseMpaFrame(buf: Uint8Array, expect: MpaFrameKind): ParseResult {
  const key = expect === 'request' ? MPA_REQUEST_KEY : MPA_REPLY_KEY;
  for (let i = 0; i < Math.min(buf.length, MPA_KEY_SIZE); i++) {
    if (buf[i] !== key[i]) {
      return invalid('key', `octet ${i} of the key is 0x${hex8(buf[i]!)}, not "${new TextDecoder().decode(key)}"`);
    }
  }
  if (buf.length < MPA_FRAME_HEADER_SIZE) return { status: 'incomplete', need: MPA_FRAME_HEADER_SIZE - buf.length };
  const flags = buf[16]!;
  const revision = buf[17]!;
  const pdLength = (buf[18]! << 8) | buf[19]!;
  const enhanced = (flags & MpaFlag.S) !== 0;
  if (revision !== MpaRevision.RFC5044 && revision !== MpaRevision.RFC6581) {
    return invalid('rev', `Rev ${revision} is not supported (1 = RFC 5044, 2 = RFC 6581)`);
  }
  if (pdLength > MPA_MAX_PRIVATE_DATA) {
    return invalid('pd_length', `PD_Length ${pdLength} exceeds ${MPA_MAX_PRIVATE_DATA} (RFC 6581 §7)`);
  }
  if (enhanced && revision < MpaRevision.RFC6581) {
    return invalid('s', `S = 1 with Rev ${revision}: the enhanced word needs Rev 2 (RFC 6581 §6)`);
  }
  if (enhanced && pdLength < ENHANCED_WORD_SIZE) {
    return invalid('pd_length', `S = 1 but PD_Length ${pdLength} cannot hold the enhanced word (RFC 6581 §9)`);
  }
  const length = MPA_FRAME_HEADER_SIZE + pdLength;
  if (buf.length < length) return { status: 'incomplete', need: length - buf.length };
  let at = MPA_FRAME_HEADER_SIZE;
  let e: EnhancedData | null = null;
  if (enhanced) {
    const word0 = (buf[at]! << 8) | buf[at + 1]!;
    const word1 = (buf[at + 2]! << 8) | buf[at + 3]!;
    e = {
      peerToPeer: (word0 & EnhancedFlag.A) !== 0,
      rtrSend: (word0 & EnhancedFlag.B) !== 0,
      rtrWrite: (word1 & EnhancedFlag.C) !== 0,
      rtrRead: (word1 & EnhancedFlag.D) !== 0,
      ird: word0 & IRD_ORD_MASK,
      ord: word1 & IRD_ORD_MASK,
    };
    at += ENHANCED_WORD_SIZE;
  }
  return {
    status: 'ok',
    length,
    frame: {
      kind: expect,
      markers: (flags & MpaFlag.M) !== 0,
      crc: (flags & MpaFlag.C) !== 0,
      reject: expect === 'reply' && (flags & MpaFlag.R) !== 0,
      revision,
      enhanced: e,
      privateData: buf.slice(at, length),
    },
  };
}

function invalid(field: 'key' | 'rev' | 'pd_length' | 's', reason: string): ParseResult {
  return { status: 'invalid', code: MpaErrorCode.INVALID_REQ_REP, field, reason };
}

const hex8 = (v: number): string => v.toString(16).padStart(2, '0');
