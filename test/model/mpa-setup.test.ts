/**
 * MPA connection set-up: Request/Reply frames and the RFC 6581 enhanced negotiation
 * (spec/mpa.md §1, §3.4, §4.2, §4.3, §7, §8; vectors/markers.json).
 */
import { describe, expect, test } from 'vitest';
import { ZodError } from 'zod';
import {
  ETYPE_MPA,
  LAYER_LLP,
  MpaErrorCode,
  acceptReply,
  buildReply,
  buildRequest,
  encodeMpaFrame,
  mpaEndpoint,
  mpaFrameLength,
  parseMpaFrame,
  seqAdd,
  setUpConnection,
  type EnhancedData,
  type MpaEndpointInput,
  type MpaFrame,
  type MpaFrameKind,
  type ParseResult,
  type RtrType,
} from '../../ts-model/mpa';
import { hex, unhex } from '../support/random';
import { loadVectors, num } from '../support/vectors';

// ---------------------------------------------------------------------------------------------
// Helpers

const REQ_KEY_HEX = '4d504120494420526571204672616d65'; // "MPA ID Req Frame"
const REP_KEY_HEX = '4d504120494420526570204672616d65'; // "MPA ID Rep Frame"
const keyHex = (kind: MpaFrameKind): string => (kind === 'request' ? REQ_KEY_HEX : REP_KEY_HEX);

/** Deterministic private data: i*7+3 mod 256. */
function pd(n: number): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = (i * 7 + 3) & 0xff;
  return out;
}

const frame = (over: Partial<MpaFrame> = {}): MpaFrame => ({
  kind: 'request',
  markers: false,
  crc: true,
  reject: false,
  revision: 2,
  enhanced: null,
  privateData: new Uint8Array(0),
  ...over,
});

const enh = (over: Partial<EnhancedData> = {}): EnhancedData => ({
  peerToPeer: true,
  rtrSend: false,
  rtrWrite: true,
  rtrRead: false,
  ird: 16,
  ord: 16,
  ...over,
});

/** Raw frame octets from a header description (bypasses encodeMpaFrame's own checks). */
function rawFrame(kind: MpaFrameKind, flags: number, rev: number, pdLength: number, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(20 + body.length);
  out.set(unhex(keyHex(kind)), 0);
  out[16] = flags;
  out[17] = rev;
  out[18] = pdLength >>> 8;
  out[19] = pdLength & 0xff;
  out.set(body, 20);
  return out;
}

function expectOk(r: ParseResult): { frame: MpaFrame; length: number } {
  expect(r.status).toBe('ok');
  if (r.status !== 'ok') throw new Error('unreachable');
  return { frame: r.frame, length: r.length };
}

function expectInvalid(r: ParseResult, field: 'key' | 'rev' | 'pd_length' | 's'): void {
  expect(r).toMatchObject({ status: 'invalid', code: 0x04, field });
}

const bits4 = (n: number): [boolean, boolean, boolean, boolean] => [!!(n & 8), !!(n & 4), !!(n & 2), !!(n & 1)];

// ---------------------------------------------------------------------------------------------
// 1. markers.json worked example

describe('markers.json worked example (spec/mpa.md §4.7)', () => {
  const v = loadVectors<any>('markers.json');
  const [requestV, replyV] = v.vectors;
  const conn = v.connection;
  const result = setUpConnection({
    initiator: { markers: true, crc: true, ird: 16, ord: 16, rtr: ['write', 'read'] },
    responder: { markers: true, crc: true, ird: 16, ord: 8, rtr: ['write'] },
    initiatorIsn: num(conn.initiator_isn),
    responderIsn: num(conn.responder_isn),
  });

  test('the connection is established', () => {
    expect(result.status).toBe('established');
    expect(result.error).toBeUndefined();
    expect(result.failedAt).toBeUndefined();
  });

  test('the Request octets match the vector byte for byte, at ISN + 1', () => {
    expect(hex(result.request.octets)).toBe(requestV.hex);
    expect(result.request.octets.length).toBe(requestV.length);
    expect(result.request.seq).toBe(num(requestV.seq));
  });

  test('the Reply octets match the vector byte for byte, at ISN + 1', () => {
    expect(result.reply).not.toBeNull();
    expect(hex(result.reply!.octets)).toBe(replyV.hex);
    expect(result.reply!.octets.length).toBe(replyV.length);
    expect(result.reply!.seq).toBe(num(replyV.seq));
  });

  test('S0 is the octet after the Request / Reply in each direction', () => {
    expect(result.initiatorToResponder.s0).toBe(num(conn.s0_initiator_to_responder));
    expect(result.responderToInitiator.s0).toBe(num(conn.s0_responder_to_initiator));
    expect(result.initiatorToResponder.s0).toBe(0x12345691);
    expect(result.responderToInitiator.s0).toBe(0x9abcdf09);
  });

  test('markers are on in both directions and CRC is on', () => {
    expect(result.initiatorToResponder.markers).toBe(conn.markers_initiator_to_responder);
    expect(result.responderToInitiator.markers).toBe(conn.markers_responder_to_initiator);
    expect(result.initiatorToResponder.markers).toBe(true);
    expect(result.responderToInitiator.markers).toBe(true);
    expect(result.crc).toBe(true);
    expect(result.initiatorToResponder.crc).toBe(true);
    expect(result.responderToInitiator.crc).toBe(true);
  });

  test("the RTR is the zero-length RDMA Write (the only type both flagged), peer-to-peer", () => {
    expect(result.rtr).toBe('write');
    expect(result.peerToPeer).toBe(true);
  });

  test('initiator ORD 16 / IRD 16, responder ORD 8 / IRD 16', () => {
    expect(result.initiator).toEqual({ ird: 16, ord: 16 });
    expect(result.responder).toEqual({ ird: 16, ord: 8 });
  });

  test('the vector octets parse to the decoded fields', () => {
    const req = expectOk(parseMpaFrame(unhex(requestV.hex), 'request'));
    expect(req.length).toBe(24);
    expect(req.frame).toMatchObject({ markers: true, crc: true, reject: false, revision: 2 });
    expect(req.frame.enhanced).toEqual({ peerToPeer: true, rtrSend: false, rtrWrite: true, rtrRead: true, ird: 16, ord: 16 });
    const rep = expectOk(parseMpaFrame(unhex(replyV.hex), 'reply'));
    expect(rep.frame).toMatchObject({ markers: true, crc: true, reject: false, revision: 2 });
    expect(rep.frame.enhanced).toEqual({ peerToPeer: true, rtrSend: false, rtrWrite: true, rtrRead: false, ird: 16, ord: 8 });
  });
});

// ---------------------------------------------------------------------------------------------
// 2. Round trip and incomplete prefixes

describe('encodeMpaFrame / parseMpaFrame round trip', () => {
  const kinds: MpaFrameKind[] = ['request', 'reply'];

  test.each(kinds.flatMap((kind) => [0, 1, 512].map((n) => ({ kind, n }))))(
    'Rev 1 $kind with $n octets of private data round-trips for every M/C(/R) combination',
    ({ kind, n }) => {
      for (let m = 0; m < 8; m++) {
        const [, markers, crc, rejectBit] = bits4(m);
        const reject = kind === 'reply' && rejectBit;
        const f = frame({ kind, markers, crc, reject, revision: 1, enhanced: null, privateData: pd(n) });
        const octets = encodeMpaFrame(f);
        expect(octets.length).toBe(20 + n);
        expect(mpaFrameLength(f)).toBe(20 + n);
        expect(hex(octets.subarray(0, 16))).toBe(keyHex(kind));
        expect(octets[16]).toBe((markers ? 0x80 : 0) | (crc ? 0x40 : 0) | (reject ? 0x20 : 0));
        expect(octets[17]).toBe(1);
        expect((octets[18]! << 8) | octets[19]!).toBe(n);
        const back = expectOk(parseMpaFrame(octets, kind));
        expect(back.length).toBe(20 + n);
        expect(back.frame).toEqual(f);
      }
    },
  );

  const irdOrdPairs: [number, number][] = [
    [0, 0],
    [0, 0x3fff],
    [0x3fff, 0],
    [0x3fff, 0x3fff],
    [1, 0x2aaa],
    [0x1555, 0x3ffe],
    [16, 8],
  ];

  test.each(kinds.flatMap((kind) => [0, 1, 508].map((n) => ({ kind, n }))))(
    'Rev 2 $kind with the enhanced word and $n octets of private data round-trips for all A/B/C/D and IRD/ORD incl. 0 and 0x3FFF',
    ({ kind, n }) => {
      for (let flags = 0; flags < 16; flags++) {
        const [peerToPeer, rtrSend, rtrWrite, rtrRead] = bits4(flags);
        for (const [ird, ord] of irdOrdPairs) {
          const e: EnhancedData = { peerToPeer, rtrSend, rtrWrite, rtrRead, ird, ord };
          const f = frame({ kind, markers: !!(flags & 1), crc: !(flags & 2), revision: 2, enhanced: e, privateData: pd(n) });
          const octets = encodeMpaFrame(f);
          expect(octets.length).toBe(24 + n);
          expect(mpaFrameLength(f)).toBe(24 + n);
          expect(octets[16]! & 0x10).toBe(0x10);
          expect(octets[17]).toBe(2);
          expect((octets[18]! << 8) | octets[19]!).toBe(n + 4);
          const word0 = (peerToPeer ? 0x8000 : 0) | (rtrSend ? 0x4000 : 0) | ird;
          const word1 = (rtrWrite ? 0x8000 : 0) | (rtrRead ? 0x4000 : 0) | ord;
          expect((octets[20]! << 8) | octets[21]!).toBe(word0);
          expect((octets[22]! << 8) | octets[23]!).toBe(word1);
          const back = expectOk(parseMpaFrame(octets, kind));
          expect(back.length).toBe(24 + n);
          expect(back.frame).toEqual(f);
        }
      }
    },
  );

  test('trailing stream octets after the frame are not consumed (length = frame length)', () => {
    const octets = encodeMpaFrame(frame({ enhanced: enh(), privateData: pd(3) }));
    const stream = new Uint8Array(octets.length + 10);
    stream.set(octets, 0);
    stream.fill(0xee, octets.length);
    const back = expectOk(parseMpaFrame(stream, 'request'));
    expect(back.length).toBe(octets.length);
    expect(back.frame.privateData).toEqual(pd(3));
  });

  const prefixCases: { name: string; kind: MpaFrameKind; f: MpaFrame }[] = [
    { name: 'Rev 1 Request, PD 0', kind: 'request', f: frame({ revision: 1 }) },
    { name: 'Rev 1 Reply, PD 512', kind: 'reply', f: frame({ kind: 'reply', revision: 1, privateData: pd(512) }) },
    { name: 'Rev 2 Request, enhanced, PD 4', kind: 'request', f: frame({ enhanced: enh() }) },
    { name: 'Rev 2 Reply, enhanced + 508 octets', kind: 'reply', f: frame({ kind: 'reply', enhanced: enh({ ird: 0x3fff }), privateData: pd(508) }) },
    { name: 'Rev 2 Request, enhanced + 1 octet', kind: 'request', f: frame({ enhanced: enh({ ord: 0 }), privateData: pd(1) }) },
  ];

  test.each(prefixCases)('every strict prefix of a $name parses as incomplete with the right need', ({ kind, f }) => {
    const octets = encodeMpaFrame(f);
    for (let len = 0; len < octets.length; len++) {
      const r = parseMpaFrame(octets.subarray(0, len), kind);
      // Before the 20-octet header is complete PD_Length is unknown: need counts up to the header.
      const need = len < 20 ? 20 - len : octets.length - len;
      expect(r, `prefix of ${len} octets`).toEqual({ status: 'incomplete', need });
    }
    expect(parseMpaFrame(octets, kind).status).toBe('ok');
  });
});

// ---------------------------------------------------------------------------------------------
// 3. Invalid frames (code 0x04) and the bits that are not checked

describe('parseMpaFrame rejects malformed frames with 0x04 and the field', () => {
  const kinds: MpaFrameKind[] = ['request', 'reply'];
  const good = (kind: MpaFrameKind): Uint8Array => encodeMpaFrame(frame({ kind, enhanced: enh(), privateData: pd(8) }));

  test.each(kinds.flatMap((kind) => Array.from({ length: 16 }, (_, i) => ({ kind, i }))))(
    '$kind key with octet $i altered is invalid (field key), already on the octets up to it',
    ({ kind, i }) => {
      for (const delta of [0x01, 0x20, 0x80]) {
        const octets = good(kind);
        octets[i] = octets[i]! ^ delta;
        expectInvalid(parseMpaFrame(octets, kind), 'key');
        expectInvalid(parseMpaFrame(octets.subarray(0, i + 1), kind), 'key');
      }
    },
  );

  test('a Reply where a Request is expected (and vice versa) is invalid (field key)', () => {
    expectInvalid(parseMpaFrame(good('reply'), 'request'), 'key');
    expectInvalid(parseMpaFrame(good('request'), 'reply'), 'key');
  });

  test.each([0, 3, 0xff])('Rev %i is invalid (field rev)', (rev) => {
    for (const kind of kinds) {
      const r1 = rawFrame(kind, 0x40, rev, 0);
      expectInvalid(parseMpaFrame(r1, kind), 'rev');
      const r2 = rawFrame(kind, 0x40, rev, 3, pd(3));
      expectInvalid(parseMpaFrame(r2, kind), 'rev');
    }
  });

  test.each([513, 0x0300, 0xffff])('PD_Length %i is invalid (field pd_length) as soon as the 20-octet header is there', (n) => {
    for (const kind of kinds) {
      for (const [flags, rev] of [
        [0x40, 1],
        [0x40, 2],
        [0x50, 2],
      ] as const) {
        const header = rawFrame(kind, flags, rev, n);
        expectInvalid(parseMpaFrame(header, kind), 'pd_length');
        // One octet short of the header is still just incomplete.
        expect(parseMpaFrame(header.subarray(0, 19), kind)).toEqual({ status: 'incomplete', need: 1 });
      }
    }
  });

  test('S = 1 with Rev 1 is invalid (field s)', () => {
    for (const kind of kinds) {
      const octets = rawFrame(kind, 0x50, 1, 4, unhex('80108008'));
      expectInvalid(parseMpaFrame(octets, kind), 's');
      expectInvalid(parseMpaFrame(octets.subarray(0, 20), kind), 's');
    }
  });

  test.each([0, 1, 2, 3])('S = 1 with PD_Length %i (< 4) is invalid (field pd_length)', (n) => {
    for (const kind of kinds) {
      const octets = rawFrame(kind, 0x50, 2, n, pd(n));
      expectInvalid(parseMpaFrame(octets, kind), 'pd_length');
      expectInvalid(parseMpaFrame(octets.subarray(0, 20), kind), 'pd_length');
    }
  });

  test('S = 1 with PD_Length exactly 4 (only the enhanced word) parses ok', () => {
    const r = expectOk(parseMpaFrame(rawFrame('request', 0x50, 2, 4, unhex('00000000')), 'request'));
    expect(r.frame.enhanced).toEqual({ peerToPeer: false, rtrSend: false, rtrWrite: false, rtrRead: false, ird: 0, ord: 0 });
    expect(r.frame.privateData.length).toBe(0);
  });

  test.each(kinds)('the Reserved bits (0x0F) are not checked in a %s', (kind) => {
    for (const res of [0x01, 0x02, 0x04, 0x08, 0x0f]) {
      const unenhanced = expectOk(parseMpaFrame(rawFrame(kind, 0xc0 | res, 1, 2, pd(2)), kind));
      expect(unenhanced.frame).toMatchObject({ markers: true, crc: true, reject: false, revision: 1, enhanced: null });
      const enhanced = expectOk(parseMpaFrame(rawFrame(kind, 0x50 | res, 2, 4, unhex('80108008')), kind));
      expect(enhanced.frame.enhanced).toEqual({ peerToPeer: true, rtrSend: false, rtrWrite: true, rtrRead: false, ird: 16, ord: 8 });
      expect(enhanced.frame.markers).toBe(false);
    }
  });

  test("a Request's R bit is not checked: it parses ok with reject false", () => {
    for (const rev of [1, 2]) {
      const flags = rev === 2 ? 0x70 : 0x60;
      const body = rev === 2 ? unhex('80108008') : new Uint8Array(0);
      const r = expectOk(parseMpaFrame(rawFrame('request', flags, rev, body.length, body), 'request'));
      expect(r.frame.reject).toBe(false);
      expect(r.frame.crc).toBe(true);
    }
  });

  test("a Reply's R bit is read as reject", () => {
    const r = expectOk(parseMpaFrame(rawFrame('reply', 0x20, 1, 0), 'reply'));
    expect(r.frame.reject).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// 4. encodeMpaFrame refuses what it cannot send

describe('encodeMpaFrame refuses malformed frames with a RangeError', () => {
  test('PD_Length > 512: 513 octets of Rev 1 private data', () => {
    expect(() => encodeMpaFrame(frame({ revision: 1, privateData: pd(513) }))).toThrow(RangeError);
    expect(() => encodeMpaFrame(frame({ revision: 1, privateData: pd(512) }))).not.toThrow();
  });

  test('PD_Length > 512: the enhanced word plus 509 octets', () => {
    expect(() => encodeMpaFrame(frame({ enhanced: enh(), privateData: pd(509) }))).toThrow(RangeError);
    expect(() => encodeMpaFrame(frame({ enhanced: enh(), privateData: pd(508) }))).not.toThrow();
  });

  test('the enhanced word with Rev 1', () => {
    expect(() => encodeMpaFrame(frame({ revision: 1, enhanced: enh() }))).toThrow(RangeError);
  });

  test.each([
    { ird: 0x4000, ord: 0 },
    { ird: 0, ord: 0x4000 },
    { ird: 0xffff, ord: 16 },
    { ird: 16, ord: 0x10000 },
  ])('IRD $ird / ORD $ord above 0x3FFF', ({ ird, ord }) => {
    expect(() => encodeMpaFrame(frame({ enhanced: enh({ ird, ord }) }))).toThrow(RangeError);
  });
});

// ---------------------------------------------------------------------------------------------
// 5. CRC, markers, S0

describe('negotiation of CRC, markers and S0 (spec/mpa.md §3.4, §4.2, §4.3)', () => {
  test.each([
    [false, false, false],
    [true, false, true],
    [false, true, true],
    [true, true, true],
  ])('Request C=%s, Reply C=%s: CRC in both directions = %s', (ic, rc, on) => {
    for (const revision of [1, 2] as const) {
      const r = setUpConnection({
        initiator: { revision, crc: ic },
        responder: { revision, crc: rc },
        initiatorIsn: 1000,
        responderIsn: 2000,
      });
      expect(r.status).toBe('established');
      expect(r.request.octets[16]! & 0x40).toBe(ic ? 0x40 : 0);
      expect(r.reply!.octets[16]! & 0x40).toBe(rc ? 0x40 : 0);
      expect(r.crc).toBe(on);
      expect(r.initiatorToResponder.crc).toBe(on);
      expect(r.responderToInitiator.crc).toBe(on);
    }
  });

  test.each([
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])('initiator M=%s, responder M=%s: each direction is marked iff its receiver asked', (im, rm) => {
    for (const revision of [1, 2] as const) {
      const r = setUpConnection({
        initiator: { revision, markers: im },
        responder: { revision, markers: rm },
        initiatorIsn: 1000,
        responderIsn: 2000,
      });
      expect(r.status).toBe('established');
      expect(r.request.octets[16]! & 0x80).toBe(im ? 0x80 : 0);
      expect(r.reply!.octets[16]! & 0x80).toBe(rm ? 0x80 : 0);
      // Initiator -> responder is marked iff the responder asked (Reply.M).
      expect(r.initiatorToResponder.markers).toBe(rm);
      // Responder -> initiator is marked iff the initiator asked (Request.M).
      expect(r.responderToInitiator.markers).toBe(im);
    }
  });

  test.each([
    { iIsn: 0x12345678, rIsn: 0x9abcdef0, revision: 2, iPd: 0, rPd: 0, s0f: 0x12345691, s0b: 0x9abcdf09 },
    { iIsn: 0xfffffff0, rIsn: 0xffffffff, revision: 2, iPd: 0, rPd: 0, s0f: 0x00000009, s0b: 0x00000018 },
    { iIsn: 0xfffffff0, rIsn: 0xffffffe0, revision: 2, iPd: 10, rPd: 100, s0f: 0x00000013, s0b: 0x0000005d },
    { iIsn: 0xffffffff, rIsn: 0, revision: 1, iPd: 0, rPd: 512, s0f: 0x00000014, s0b: 0x00000215 },
    { iIsn: 0xffffffeb, rIsn: 0x7fffffff, revision: 1, iPd: 3, rPd: 0, s0f: 0x00000003, s0b: 0x80000014 },
  ])(
    'S0 = ISN + 1 + frame length mod 2^32 (ISNs $iIsn / $rIsn, Rev $revision, PD $iPd / $rPd)',
    ({ iIsn, rIsn, revision, iPd, rPd, s0f, s0b }) => {
      const r = setUpConnection({
        initiator: { revision: revision as 1 | 2, privateData: pd(iPd) },
        responder: { revision: revision as 1 | 2, privateData: pd(rPd) },
        initiatorIsn: iIsn,
        responderIsn: rIsn,
      });
      expect(r.status).toBe('established');
      const enhancedWord = revision === 2 ? 4 : 0;
      expect(r.request.octets.length).toBe(20 + enhancedWord + iPd);
      expect(r.reply!.octets.length).toBe(20 + enhancedWord + rPd);
      expect(r.request.seq).toBe((iIsn + 1) >>> 0);
      expect(r.reply!.seq).toBe((rIsn + 1) >>> 0);
      expect(r.initiatorToResponder.s0).toBe((iIsn + 1 + r.request.octets.length) >>> 0);
      expect(r.responderToInitiator.s0).toBe((rIsn + 1 + r.reply!.octets.length) >>> 0);
      expect(r.initiatorToResponder.s0).toBe(s0f);
      expect(r.responderToInitiator.s0).toBe(s0b);
    },
  );

  const FLAG_COMBINATIONS = Array.from({ length: 1 << 4 }, (_, n) => bits4(n));

  test.each(FLAG_COMBINATIONS)(
    'a failure after the Reply (2/0/0x07) keeps the CRC, markers and S0 the frames negotiated: initiator M=%s C=%s, responder M=%s C=%s',
    (im, ic, rm, rc) => {
      const setup = (responderRtr: RtrType[]) =>
        setUpConnection({
          // The initiator can only send a Read RTR.
          initiator: { markers: im, crc: ic, rtr: ['read'] },
          responder: { markers: rm, crc: rc, rtr: responderRtr },
          initiatorIsn: 1000,
          responderIsn: 2000,
        });
      const failed = setup(['write']);
      expect(failed.status).toBe('failed');
      expect(failed.error).toMatchObject({ code: MpaErrorCode.NO_MATCHING_RTR, terminate: true });
      // The initiator's Terminate needs the stream both frames set up (spec/mpa.md §8.4).
      const on = ic || rc;
      expect(failed.crc).toBe(on);
      expect(failed.initiatorToResponder).toMatchObject({ crc: on, markers: rm, s0: seqAdd(failed.request.seq, failed.request.octets.length) });
      expect(failed.responderToInitiator).toMatchObject({ crc: on, markers: im, s0: seqAdd(failed.reply!.seq, failed.reply!.octets.length) });
      // Exactly what an established connection with the same M and C bits gets.
      const established = setup(['read']);
      expect(established.status).toBe('established');
      const framing = (r: typeof failed) => ({ crc: r.crc, forward: r.initiatorToResponder, backward: r.responderToInitiator });
      expect(framing(failed)).toEqual(framing(established));
    },
  );

  test.each(FLAG_COMBINATIONS.filter(([, , rm, rc]) => !rm && !rc))(
    'with no Reply (a Rev 1 responder refuses an enhanced Request, 0x04) only the Request\'s bits count: initiator M=%s C=%s',
    (im, ic) => {
      const r = setUpConnection({ initiator: { markers: im, crc: ic }, responder: { revision: 1, markers: true, crc: true }, initiatorIsn: 1000, responderIsn: 2000 });
      expect(r.status).toBe('failed');
      expect(r.reply).toBeNull();
      // An absent Reply asks for neither CRC nor markers.
      expect(r.crc).toBe(ic);
      expect(r.initiatorToResponder).toMatchObject({ crc: ic, markers: false, s0: seqAdd(r.request.seq, r.request.octets.length) });
      expect(r.responderToInitiator).toMatchObject({ crc: ic, markers: im });
    },
  );
});

// ---------------------------------------------------------------------------------------------
// 6. IRD / ORD

describe('IRD/ORD negotiation (RFC 6581 §9.1, spec/mpa.md §8.2)', () => {
  const isns = { initiatorIsn: 0x100, responderIsn: 0x200 };

  test('the responder lowers its ORD to the initiator IRD', () => {
    const r = setUpConnection({ initiator: { ird: 4, ord: 16, rtr: ['write'] }, responder: { ird: 16, ord: 8, rtr: ['write'] }, ...isns });
    expect(r.status).toBe('established');
    expect(r.reply!.frame.enhanced).toMatchObject({ ird: 16, ord: 4 });
    expect(hex(r.reply!.octets.subarray(20, 24))).toBe('80108004');
    expect(r.responder).toEqual({ ird: 16, ord: 4 });
    expect(r.initiator).toEqual({ ird: 4, ord: 16 });
  });

  test('a responder ORD at or below the initiator IRD is kept', () => {
    const r = setUpConnection({ initiator: { ird: 8 }, responder: { ord: 8 }, ...isns });
    expect(r.reply!.frame.enhanced!.ord).toBe(8);
    expect(r.responder.ord).toBe(8);
  });

  test('the initiator lowers its ORD to the responder IRD', () => {
    const r = setUpConnection({ initiator: { ird: 16, ord: 16 }, responder: { ird: 5, ord: 2 }, ...isns });
    expect(r.status).toBe('established');
    expect(r.initiator).toEqual({ ird: 16, ord: 5 });
  });

  test('initiator ORD 0x3FFF: the Reply IRD is 0x3FFF, the responder keeps its IRD, the initiator keeps its ORD', () => {
    const r = setUpConnection({ initiator: { ird: 16, ord: 0x3fff }, responder: { ird: 7, ord: 8 }, ...isns });
    expect(r.status).toBe('established');
    expect(r.reply!.frame.enhanced!.ird).toBe(0x3fff);
    expect((r.reply!.octets[20]! << 8 | r.reply!.octets[21]!) & 0x3fff).toBe(0x3fff);
    expect(r.responder.ird).toBe(7);
    expect(r.initiator.ord).toBe(0x3fff);
  });

  test('a Reply IRD of 0x3FFF leaves the initiator ORD unchanged (acceptReply)', () => {
    const initiator = mpaEndpoint({ ird: 16, ord: 9, rtr: ['write'] });
    const request = buildRequest(initiator);
    const reply = frame({ kind: 'reply', enhanced: enh({ ird: 0x3fff, ord: 4 }) });
    expect(acceptReply(request, reply, initiator)).toEqual({ status: 'established', ird: 16, ord: 9, rtr: 'write' });
  });

  test('initiator IRD 0x3FFF: the Reply ORD is 0x3FFF and the responder keeps its ORD', () => {
    const r = setUpConnection({ initiator: { ird: 0x3fff, ord: 4 }, responder: { ird: 16, ord: 12 }, ...isns });
    expect(r.status).toBe('established');
    expect(r.reply!.frame.enhanced!.ord).toBe(0x3fff);
    expect((r.reply!.octets[22]! << 8 | r.reply!.octets[23]!) & 0x3fff).toBe(0x3fff);
    expect(r.responder.ord).toBe(12);
    expect(r.initiator).toEqual({ ird: 0x3fff, ord: 4 });
  });

  test('a Reply ORD of 0x3FFF leaves the initiator IRD unchanged and is not an IRD shortfall (acceptReply)', () => {
    const initiator = mpaEndpoint({ ird: 2, ord: 4, rtr: ['write'] });
    const request = buildRequest(initiator);
    const reply = frame({ kind: 'reply', enhanced: enh({ ird: 16, ord: 0x3fff }) });
    expect(acceptReply(request, reply, initiator)).toEqual({ status: 'established', ird: 2, ord: 4, rtr: 'write' });
  });

  test('the responder raises IRD 0 to 1 when it flags a zero-length Read RTR', () => {
    const r = setUpConnection({ initiator: { rtr: ['read'], ord: 4 }, responder: { ird: 0, rtr: ['read'] }, ...isns });
    expect(r.reply!.frame.enhanced).toMatchObject({ peerToPeer: true, rtrRead: true, ird: 1 });
    expect(r.responder.ird).toBe(1);
    expect(r.status).toBe('established');
    expect(r.rtr).toBe('read');
    expect(r.initiator.ord).toBe(1);
  });

  test('the responder raises IRD 0 only when it flags a Read RTR (kept at 0 when it flags only Write)', () => {
    const r = setUpConnection({ initiator: { rtr: ['write', 'read'] }, responder: { ird: 0, rtr: ['write', 'read'] }, ...isns });
    // Both sides flag Write and Read, so the responder flags both and raises its IRD.
    expect(r.reply!.frame.enhanced).toMatchObject({ rtrWrite: true, rtrRead: true, ird: 1 });
    const w = setUpConnection({ initiator: { rtr: ['write'] }, responder: { ird: 0, rtr: ['write', 'read'] }, ...isns });
    expect(w.reply!.frame.enhanced).toMatchObject({ rtrWrite: true, rtrRead: false, ird: 0 });
    expect(w.responder.ird).toBe(0);
    expect(w.status).toBe('established');
    expect(w.rtr).toBe('write');
    expect(w.initiator.ord).toBe(0);
  });

  test('RFC 6581 §9.1 example: initiator ORD 0 with a Read RTR, responder raises its IRD to 1 and the Read RTR is used', () => {
    // "if the initiator ORD is 0 (RDMA Reads will not be used by the ULP) and the responder supports
    // use of a zero-length RDMA Read RTR indication, then the responder IRD can be set to 1."
    const r = setUpConnection({ initiator: { rtr: ['read'], ord: 0 }, responder: { ird: 0, rtr: ['read'] }, ...isns });
    expect(r.reply!.frame.enhanced).toMatchObject({ rtrRead: true, ird: 1 });
    expect(r.error).toBeUndefined();
    expect(r.status).toBe('established');
    expect(r.rtr).toBe('read');
    expect(r.responder.ird).toBe(1);
  });

  test('rejectIfIrdBelowOrd: a too-small initiator IRD gets an R=1 Reply carrying the needed ORD', () => {
    const r = setUpConnection({ initiator: { ird: 4 }, responder: { ord: 8, rejectIfIrdBelowOrd: true }, ...isns });
    expect(r.status).toBe('rejected');
    expect(r.reply!.frame.reject).toBe(true);
    expect(r.reply!.octets[16]! & 0x20).toBe(0x20);
    expect(r.reply!.frame.enhanced!.ord).toBe(8);
    expect((r.reply!.octets[22]! << 8 | r.reply!.octets[23]!) & 0x3fff).toBe(8);
    expect(r.rtr).toBeNull();
  });

  test('rejectIfIrdBelowOrd accepts when the initiator IRD is enough (or 0x3FFF)', () => {
    for (const ird of [8, 9, 0x3fff]) {
      const r = setUpConnection({ initiator: { ird }, responder: { ord: 8, rejectIfIrdBelowOrd: true }, ...isns });
      expect(r.status).toBe('established');
      expect(r.reply!.frame.reject).toBe(false);
      expect(r.responder.ord).toBe(8);
    }
  });
});

// ---------------------------------------------------------------------------------------------
// 7. Rejection by the ULP

describe('ULP rejection (spec/mpa.md §7.5)', () => {
  test.each([1, 2] as const)('a Rev %i responder with accept:false sends R=1 and the connection is rejected', (revision) => {
    const r = setUpConnection({ initiator: { revision }, responder: { revision, accept: false }, initiatorIsn: 5, responderIsn: 6 });
    expect(r.status).toBe('rejected');
    expect(r.reply).not.toBeNull();
    expect(r.reply!.frame.reject).toBe(true);
    expect(r.reply!.octets[16]! & 0x20).toBe(0x20);
    expect(r.request.octets[16]! & 0x20).toBe(0);
    expect(r.rtr).toBeNull();
    expect(r.error).toBeUndefined();
  });

  test('acceptReply reports a hand-made R=1 Reply as rejected', () => {
    const initiator = mpaEndpoint();
    const request = buildRequest(initiator);
    const out = acceptReply(request, frame({ kind: 'reply', reject: true, enhanced: enh() }), initiator);
    expect(out.status).toBe('rejected');
  });
});

// ---------------------------------------------------------------------------------------------
// 8. Insufficient IRD

describe('insufficient IRD (RFC 6581 §9.1, error 0x06)', () => {
  test('a Reply ORD above the initiator IRD fails with 2/0/0x06 and a Terminate', () => {
    const initiator = mpaEndpoint({ ird: 8, ord: 8 });
    const request = buildRequest(initiator);
    const out = acceptReply(request, frame({ kind: 'reply', enhanced: enh({ ird: 16, ord: 9 }) }), initiator);
    expect(out.status).toBe('failed');
    if (out.status !== 'failed') return;
    expect(out.error.code).toBe(0x06);
    expect(out.error.code).toBe(MpaErrorCode.INSUFFICIENT_IRD);
    expect(out.error.terminate).toBe(true);
    expect(out.error.layer).toBe(2);
    expect(out.error.layer).toBe(LAYER_LLP);
    expect(out.error.etype).toBe(0);
    expect(out.error.etype).toBe(ETYPE_MPA);
  });

  test('a Reply ORD equal to the initiator IRD is accepted', () => {
    const initiator = mpaEndpoint({ ird: 8, ord: 8 });
    const request = buildRequest(initiator);
    const out = acceptReply(request, frame({ kind: 'reply', enhanced: enh({ ird: 16, ord: 8 }) }), initiator);
    expect(out).toEqual({ status: 'established', ird: 8, ord: 8, rtr: 'write' });
  });
});

// ---------------------------------------------------------------------------------------------
// 9. RTR choice

describe('peer-to-peer RTR choice (RFC 6581 §9.2, spec/mpa.md §8.3)', () => {
  test('no common RTR type: the initiator fails with 2/0/0x07 and a Terminate', () => {
    const r = setUpConnection({ initiator: { rtr: ['send'] }, responder: { rtr: ['write'] }, initiatorIsn: 1, responderIsn: 2 });
    expect(r.status).toBe('failed');
    expect(r.failedAt).toBe('initiator');
    expect(r.error).toMatchObject({ layer: 2, etype: 0, code: 0x07, terminate: true });
    expect(r.rtr).toBeNull();
    // The responder supports none of the offered types, so it flags one it does support.
    expect(r.reply).not.toBeNull();
    expect(r.reply!.frame.enhanced).toMatchObject({ peerToPeer: true, rtrSend: false, rtrWrite: true, rtrRead: false });
  });

  test('a Reply that does not echo A=1 fails with 0x07', () => {
    const initiator = mpaEndpoint({ rtr: ['write', 'send'] });
    const request = buildRequest(initiator);
    expect(request.enhanced!.peerToPeer).toBe(true);
    const out = acceptReply(request, frame({ kind: 'reply', enhanced: enh({ peerToPeer: false, rtrWrite: true }) }), initiator);
    expect(out.status).toBe('failed');
    if (out.status !== 'failed') return;
    expect(out.error.code).toBe(0x07);
    expect(out.error.terminate).toBe(true);
  });

  test("the initiator picks its most preferred type among those both flagged", () => {
    const r = setUpConnection({ initiator: { rtr: ['read', 'send', 'write'] }, responder: { rtr: ['send', 'write'] }, initiatorIsn: 1, responderIsn: 2 });
    expect(r.status).toBe('established');
    expect(r.reply!.frame.enhanced).toMatchObject({ rtrSend: true, rtrWrite: true, rtrRead: false });
    expect(r.rtr).toBe('send');
  });

  test('client-server (initiator rtr []) sends A=0 with no RTR flags, and is established without an RTR', () => {
    const r = setUpConnection({ initiator: { rtr: [] }, responder: { rtr: ['write'] }, initiatorIsn: 1, responderIsn: 2 });
    expect(r.request.frame.enhanced).toMatchObject({ peerToPeer: false, rtrSend: false, rtrWrite: false, rtrRead: false });
    expect(r.request.octets[20]! & 0xc0).toBe(0);
    expect(r.request.octets[22]! & 0xc0).toBe(0);
    expect(r.reply!.frame.enhanced).toMatchObject({ peerToPeer: false, rtrSend: false, rtrWrite: false, rtrRead: false });
    expect(r.status).toBe('established');
    expect(r.peerToPeer).toBe(false);
    expect(r.rtr).toBeNull();
  });
});

// ---------------------------------------------------------------------------------------------
// 10. Rev 1 / Rev 2 interoperability

describe('Rev 1 / Rev 2 interoperability (RFC 6581 §6, §10; spec/mpa.md §7.3)', () => {
  test('a Rev 1 initiator and a Rev 2 responder exchange unenhanced frames; Reply Rev 1; no RTR', () => {
    const r = setUpConnection({ initiator: { revision: 1 }, responder: { revision: 2 }, initiatorIsn: 10, responderIsn: 20 });
    expect(r.status).toBe('established');
    expect(r.request.octets.length).toBe(20);
    expect(r.request.octets[16]! & 0x10).toBe(0);
    expect(r.request.octets[17]).toBe(1);
    expect(r.request.frame.enhanced).toBeNull();
    expect(r.reply!.octets.length).toBe(20);
    expect(r.reply!.octets[16]! & 0x10).toBe(0);
    expect(r.reply!.octets[17]).toBe(1);
    expect(r.reply!.frame.enhanced).toBeNull();
    expect(r.rtr).toBeNull();
    expect(r.peerToPeer).toBe(false);
  });

  test('an enhanced Request to a Rev 1 responder fails at the responder with 0x04, no Terminate, no Reply', () => {
    const r = setUpConnection({ initiator: { revision: 2 }, responder: { revision: 1 }, initiatorIsn: 10, responderIsn: 20 });
    expect(r.status).toBe('failed');
    expect(r.failedAt).toBe('responder');
    expect(r.error).toMatchObject({ layer: 2, etype: 0, code: 0x04, terminate: false });
    expect(r.reply).toBeNull();
  });

  test('buildReply of a Rev 1 responder to an enhanced Request is invalid 0x04', () => {
    const d = buildReply(buildRequest(mpaEndpoint()), mpaEndpoint({ revision: 1 }));
    expect(d.status).toBe('invalid');
    if (d.status === 'invalid') expect(d.error.code).toBe(0x04);
  });

  test('acceptReply: an enhanced Reply to an unenhanced Request is 0x04', () => {
    const initiator = mpaEndpoint();
    const request = frame({ revision: 2, enhanced: null });
    const out = acceptReply(request, frame({ kind: 'reply', revision: 2, enhanced: enh() }), initiator);
    expect(out.status).toBe('failed');
    if (out.status === 'failed') expect(out.error).toMatchObject({ code: 0x04, terminate: false });
  });

  test('acceptReply: an unenhanced Reply to an enhanced Request is 0x04', () => {
    const initiator = mpaEndpoint();
    const request = buildRequest(initiator);
    const out = acceptReply(request, frame({ kind: 'reply', revision: 2, enhanced: null }), initiator);
    expect(out.status).toBe('failed');
    if (out.status === 'failed') expect(out.error.code).toBe(0x04);
  });

  test('acceptReply: a Reply with a higher Rev than the Request is 0x04', () => {
    const initiator = mpaEndpoint({ revision: 1 });
    const request = buildRequest(initiator);
    expect(request.revision).toBe(1);
    const out = acceptReply(request, frame({ kind: 'reply', revision: 2, enhanced: null }), initiator);
    expect(out.status).toBe('failed');
    if (out.status === 'failed') expect(out.error).toMatchObject({ code: 0x04, terminate: false });
  });
});

// ---------------------------------------------------------------------------------------------
// 11. Configuration validation

describe('endpoint configuration is validated by zod', () => {
  test('ird 0x4000 is a ZodError naming ird', () => {
    let err: unknown;
    try {
      mpaEndpoint({ ird: 0x4000 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ZodError);
    expect((err as ZodError).issues[0]!.path).toContain('ird');
  });

  test('ord -1 is a ZodError naming ord', () => {
    expect(() => mpaEndpoint({ ord: -1 })).toThrow(ZodError);
    try {
      mpaEndpoint({ ord: -1 });
    } catch (e) {
      expect((e as ZodError).issues[0]!.path).toContain('ord');
    }
  });

  test("rtr ['bogus'] is a ZodError naming rtr", () => {
    let err: unknown;
    try {
      mpaEndpoint({ rtr: ['bogus'] } as unknown as MpaEndpointInput);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ZodError);
    expect((err as ZodError).issues[0]!.path).toContain('rtr');
  });

  test('an unknown key is rejected (strict schema)', () => {
    let err: unknown;
    try {
      mpaEndpoint({ irdd: 4 } as unknown as MpaEndpointInput);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ZodError);
    const issue = (err as ZodError).issues[0]!;
    expect(issue.code).toBe('unrecognized_keys');
    expect(JSON.stringify(issue)).toContain('irdd');
  });

  test('setUpConnection rejects a bad endpoint with the same ZodError', () => {
    expect(() => setUpConnection({ initiator: { ird: 0x4000 }, initiatorIsn: 0, responderIsn: 0 })).toThrow(ZodError);
  });

  test('a Rev 2 responder that accepts no RTR type is refused, citing RFC 6581 §9.2', () => {
    let err: unknown;
    try {
      setUpConnection({ responder: { rtr: [] }, initiatorIsn: 0, responderIsn: 0 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ZodError);
    const issue = (err as ZodError).issues[0]!;
    expect(issue.path).toEqual(['rtr']);
    expect(issue.message).toMatch(/RFC 6581 §9\.2/);
    // Called directly, the responder's decision refuses it too, whatever the Request.
    for (const request of [buildRequest(mpaEndpoint()), buildRequest(mpaEndpoint({ rtr: [] }))]) {
      expect(() => buildReply(request, mpaEndpoint({ rtr: [] }))).toThrow(RangeError);
    }
  });

  test('an empty RTR list is fine for a Rev 1 responder and for a client-server initiator', () => {
    const rev1 = setUpConnection({ initiator: { revision: 1 }, responder: { revision: 1, rtr: [] }, initiatorIsn: 0, responderIsn: 0 });
    expect(rev1.status).toBe('established');
    const clientServer = setUpConnection({ initiator: { rtr: [] }, initiatorIsn: 0, responderIsn: 0 });
    expect(clientServer.status).toBe('established');
  });

  test('defaults: Rev 2, no markers, CRC on, IRD/ORD 16, all RTR types, accept', () => {
    expect(mpaEndpoint()).toMatchObject({
      revision: 2,
      markers: false,
      crc: true,
      ird: 16,
      ord: 16,
      rtr: ['write', 'send', 'read'],
      accept: true,
      rejectIfIrdBelowOrd: false,
    });
  });
});
