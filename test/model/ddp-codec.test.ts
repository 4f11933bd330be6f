import { describe, expect, test } from 'vitest';
import { DDP_VERSION, DdpFlag, Qn, TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { decodeDdpHeader, encodeDdpSegment, headerSize, writeDdpHeader, type DdpHeader, type TaggedHeader, type UntaggedHeader } from '../../ts-model/ddp/header';
import { segmentMessage, type DdpMessage } from '../../ts-model/ddp/segmenter';
import { encodeFpdu } from '../../ts-model/mpa';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { Opcode, isTaggedOpcode, rdmapControl, rdmapOpcode, rdmapVersion } from '../../ts-model/rdmap/constants';
import {
  decodeAtomicRequest,
  decodeAtomicResponse,
  decodeReadRequest,
  decodeTerminate,
  encodeAtomicRequest,
  encodeAtomicResponse,
  encodeReadRequest,
  encodeTerminate,
  terminateLength,
  type TerminateFields,
} from '../../ts-model/rdmap/headers';
import { hex, unhex, withSeed, type Rng } from '../support/random';
import { loadVectors } from '../support/vectors';

/** Hex dump text as in the spec (spaces, newlines, upper case) → lower-case hex. */
const spaced = (t: string): string => t.replace(/\s+/g, '').toLowerCase();
const be32 = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset).getUint32(at);
const be64 = (b: Uint8Array, at: number): bigint => new DataView(b.buffer, b.byteOffset).getBigUint64(at);
const untagged = (opcode: number, qn: number, msn: number, last = true, rsvdUlp2 = 0, mo = 0): UntaggedHeader => ({
  tagged: false,
  last,
  dv: DDP_VERSION,
  rsvdUlp: rdmapControl(opcode),
  rsvdUlp2,
  qn,
  msn,
  mo,
});

// -------------------------------------------------------------------------------------------------
describe('DDP headers (spec/ddp-rdmap.md §1)', () => {
  test('tagged header: random fields round-trip, every field at its D+ offset', () => {
    withSeed(0xdd01, (r) => {
      for (let i = 0; i < 500; i++) {
        const h: TaggedHeader = { tagged: true, last: r.bool(), dv: DDP_VERSION, rsvdUlp: r.int(0, 255), stag: r.u32(), to: r.u64() };
        const payload = r.bytes(r.int(0, 40));
        const seg = encodeDdpSegment(h, payload);
        expect(seg.length).toBe(TAGGED_HEADER_SIZE + payload.length);
        // D+0 control: T | L | Rsvd 0 | DV.
        expect(seg[0]).toBe(0x80 | (h.last ? 0x40 : 0) | 0x01);
        expect(seg[1]).toBe(h.rsvdUlp);
        expect(be32(seg, 2)).toBe(h.stag);
        expect(be64(seg, 6)).toBe(h.to);
        expect(hex(seg.subarray(14))).toBe(hex(payload));
        expect(decodeDdpHeader(seg)).toEqual(h);
      }
    });
  });

  test('untagged header: random fields round-trip, every field at its D+ offset', () => {
    withSeed(0xdd02, (r) => {
      for (let i = 0; i < 500; i++) {
        const h: UntaggedHeader = { tagged: false, last: r.bool(), dv: DDP_VERSION, rsvdUlp: r.int(0, 255), rsvdUlp2: r.u32(), qn: r.u32(), msn: r.u32(), mo: r.u32() };
        const payload = r.bytes(r.int(0, 40));
        const seg = encodeDdpSegment(h, payload);
        expect(seg.length).toBe(UNTAGGED_HEADER_SIZE + payload.length);
        expect(seg[0]).toBe((h.last ? 0x40 : 0) | 0x01);
        expect(seg[1]).toBe(h.rsvdUlp);
        expect(be32(seg, 2)).toBe(h.rsvdUlp2);
        expect(be32(seg, 6)).toBe(h.qn);
        expect(be32(seg, 10)).toBe(h.msn);
        expect(be32(seg, 14)).toBe(h.mo);
        expect(hex(seg.subarray(18))).toBe(hex(payload));
        expect(decodeDdpHeader(seg)).toEqual(h);
      }
    });
  });

  test('fixed hand-made octets decode to the fields (big-endian)', () => {
    const t = unhex('c14012345678' + '0102030405060708');
    expect(decodeDdpHeader(t)).toEqual({ tagged: true, last: true, dv: 1, rsvdUlp: 0x40, stag: 0x12345678, to: 0x0102030405060708n });
    const u = unhex('0143' + 'aabbccdd' + '00000000' + 'fffffffe' + '000005ca');
    expect(decodeDdpHeader(u)).toEqual({ tagged: false, last: false, dv: 1, rsvdUlp: 0x43, rsvdUlp2: 0xaabbccdd, qn: 0, msn: 0xfffffffe, mo: 1482 });
  });

  test('a ULPDU shorter than its header decodes to null (H1)', () => {
    expect(decodeDdpHeader(new Uint8Array(0))).toBeNull();
    expect(decodeDdpHeader(new Uint8Array(13).fill(0xc1))).toBeNull();
    expect(decodeDdpHeader(unhex('c1' + '00'.repeat(12)))).toBeNull();
    expect(decodeDdpHeader(unhex('41' + '00'.repeat(16)))).toBeNull();
    expect(decodeDdpHeader(unhex('c1' + '00'.repeat(13)))).not.toBeNull();
    expect(decodeDdpHeader(unhex('41' + '00'.repeat(17)))).not.toBeNull();
  });

  test('reserved control bits are written 0 and the masks are those of §1.1', () => {
    expect(DdpFlag).toEqual({ T: 0x80, L: 0x40, RSVD: 0x3c, DV: 0x03 });
    expect(headerSize(true)).toBe(14);
    expect(headerSize(false)).toBe(18);
    const out = new Uint8Array(18);
    writeDdpHeader(out, 0, { tagged: false, last: true, dv: 0xff, rsvdUlp: 0x43, rsvdUlp2: 0, qn: 0, msn: 1, mo: 0 });
    expect(out[0]! & DdpFlag.RSVD).toBe(0);
    // DV keeps only its two bits.
    expect(out[0]! & DdpFlag.DV).toBe(0x03);
  });

  // §1.1: last-segment octet pairs.
  const PAIRS: [string, number, string][] = [
    ['RDMA Write', Opcode.WRITE, 'c140'],
    ['RDMA Read Request', Opcode.READ_REQUEST, '4141'],
    ['RDMA Read Response', Opcode.READ_RESPONSE, 'c142'],
    ['Send', Opcode.SEND, '4143'],
    ['Send with Invalidate', Opcode.SEND_INVALIDATE, '4144'],
    ['Send with SE', Opcode.SEND_SE, '4145'],
    ['Send with SE and Invalidate', Opcode.SEND_SE_INVALIDATE, '4146'],
    ['Terminate', Opcode.TERMINATE, '4147'],
    ['Immediate Data', Opcode.IMMEDIATE, '4148'],
    ['Immediate Data with SE', Opcode.IMMEDIATE_SE, '4149'],
    ['Atomic Request', Opcode.ATOMIC_REQUEST, '414a'],
    ['Atomic Response', Opcode.ATOMIC_RESPONSE, '414b'],
  ];
  test.each(PAIRS)('%s: control octets %s on the last segment, 81/01 xx on the others', (_, opcode, pair) => {
    const tagged = isTaggedOpcode(opcode);
    const mk = (last: boolean): DdpHeader =>
      tagged
        ? { tagged: true, last, dv: DDP_VERSION, rsvdUlp: rdmapControl(opcode), stag: 0x1000, to: 0n }
        : { tagged: false, last, dv: DDP_VERSION, rsvdUlp: rdmapControl(opcode), rsvdUlp2: 0, qn: 0, msn: 1, mo: 0 };
    expect(hex(encodeDdpSegment(mk(true), new Uint8Array(0)).subarray(0, 2))).toBe(pair);
    const nonLast = hex(encodeDdpSegment(mk(false), new Uint8Array(0)).subarray(0, 2));
    expect(nonLast).toBe((tagged ? '81' : '01') + pair.slice(2));
    // RDMAP control octet: RV 01b, Rsv 0, opcode.
    expect(rdmapVersion(rdmapControl(opcode))).toBe(1);
    expect(rdmapOpcode(rdmapControl(opcode))).toBe(opcode);
    expect(rdmapControl(opcode) & 0x30).toBe(0);
  });
});

// -------------------------------------------------------------------------------------------------
describe('DDP segmentation (spec/ddp-rdmap.md §4)', () => {
  const filled = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 7 + 3) & 0xff);

  test('untagged 2048-octet message, MULPDU 1500: MO 0 / 1482 L=0, MO 1482 / 566 L=1', () => {
    const payload = filled(2048);
    const segs = segmentMessage({ tagged: false, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: 5, payload }, 1500);
    expect(segs).toHaveLength(2);
    const [a, b] = segs.map((s) => decodeDdpHeader(s) as UntaggedHeader);
    expect(a).toMatchObject({ tagged: false, last: false, qn: 0, msn: 5, mo: 0 });
    expect(b).toMatchObject({ tagged: false, last: true, qn: 0, msn: 5, mo: 1482 });
    expect(segs[0]!.length - 18).toBe(1482);
    expect(segs[1]!.length - 18).toBe(566);
    expect(segs[0]!.length).toBe(1500);
    expect(hex(segs[0]!.subarray(0, 2))).toBe('0143');
    expect(hex(segs[1]!.subarray(0, 2))).toBe('4143');
    expect(hex(new Uint8Array([...segs[0]!.subarray(18), ...segs[1]!.subarray(18)]))).toBe(hex(payload));
  });

  test('tagged 2048 octets at TO 16384, MULPDU 1500: TO 16384 / 1486 L=0, TO 17870 / 562 L=1', () => {
    const payload = filled(2048);
    const segs = segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: 0xabcd0001, to: 16384n, payload }, 1500);
    expect(segs).toHaveLength(2);
    const [a, b] = segs.map((s) => decodeDdpHeader(s) as TaggedHeader);
    expect(a).toMatchObject({ tagged: true, last: false, stag: 0xabcd0001, to: 16384n });
    expect(b).toMatchObject({ tagged: true, last: true, stag: 0xabcd0001, to: 17870n });
    expect(segs[0]!.length - 14).toBe(1486);
    expect(segs[1]!.length - 14).toBe(562);
    expect(hex(segs[0]!.subarray(0, 2))).toBe('8140');
    expect(hex(segs[1]!.subarray(0, 2))).toBe('c140');
  });

  test('a zero-length message is exactly one segment with L=1', () => {
    const t = segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: 7, to: 99n, payload: new Uint8Array(0) }, 1500);
    expect(t.map(hex)).toEqual(['c14000000007' + '0000000000000063']);
    const u = segmentMessage({ tagged: false, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: 1, payload: new Uint8Array(0) }, 1500);
    expect(u).toHaveLength(1);
    expect(decodeDdpHeader(u[0]!)).toMatchObject({ last: true, mo: 0, msn: 1 });
    expect(u[0]!.length).toBe(18);
  });

  test('random messages: every segment ≤ MULPDU, offsets contiguous, only the last has L=1, payload reassembles', () => {
    withSeed(0xdd03, (r) => {
      for (let i = 0; i < 300; i++) {
        const tagged = r.bool();
        const mulpdu = r.int(tagged ? 15 : 19, 2000);
        const payload = r.bytes(r.bool(0.1) ? 0 : r.int(1, 6000));
        const to = r.bool(0.2) ? (1n << 64n) - BigInt(payload.length) : r.u64() >> 1n;
        const msg: DdpMessage = tagged
          ? { tagged, rsvdUlp: rdmapControl(Opcode.WRITE), stag: r.u32(), to, payload }
          : { tagged, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: r.u32(), payload };
        const segs = segmentMessage(msg, mulpdu);
        const hs = headerSize(tagged);
        const room = mulpdu - hs;
        expect(segs.length).toBe(Math.max(1, Math.ceil(payload.length / room)));
        let offset = 0;
        const parts: number[] = [];
        segs.forEach((s, k) => {
          expect(s.length).toBeLessThanOrEqual(mulpdu);
          const h = decodeDdpHeader(s)!;
          expect(h.last).toBe(k === segs.length - 1);
          if (h.tagged) {
            expect(h.stag).toBe((msg as { stag: number }).stag);
            expect(h.to).toBe(BigInt.asUintN(64, to + BigInt(offset)));
          } else {
            expect(h.msn).toBe((msg as { msn: number }).msn);
            expect(h.mo).toBe(offset);
          }
          // every non-last segment is full
          if (k < segs.length - 1) expect(s.length).toBe(mulpdu);
          offset += s.length - hs;
          parts.push(...s.subarray(hs));
        });
        expect(offset).toBe(payload.length);
        expect(hex(Uint8Array.from(parts))).toBe(hex(payload));
      }
    });
  });

  test('a MULPDU too small for the header and one octet is refused', () => {
    expect(() => segmentMessage({ tagged: true, rsvdUlp: 0x40, stag: 1, to: 0n, payload: new Uint8Array(4) }, 14)).toThrow(RangeError);
    expect(() => segmentMessage({ tagged: false, rsvdUlp: 0x43, rsvdUlp2: 0, qn: 0, msn: 1, payload: new Uint8Array(4) }, 18)).toThrow(RangeError);
  });
});

// -------------------------------------------------------------------------------------------------
describe('RDMA Read Request (spec/ddp-rdmap.md §2.3)', () => {
  const SPEC_FPDU = spaced(`
    00 2E 41 41 00 00 00 00 00 00 00 01 00 00 00 01  00 00 00 00 00 00 12 34 00 00 00 00 00 01 00 00
    00 00 10 00 00 AB CD 01 00 00 00 00 00 20 00 00  5F 13 97 68`);
  const fields = { sinkStag: 0x1234, sinkTo: 0x10000n, size: 0x1000, srcStag: 0x00abcd01, srcTo: 0x200000n };

  test('the example FPDU byte for byte', () => {
    const rreq = encodeReadRequest(fields);
    expect(rreq.length).toBe(28);
    const segs = segmentMessage({ tagged: false, rsvdUlp: rdmapControl(Opcode.READ_REQUEST), rsvdUlp2: 0, qn: Qn.READ_REQUEST, msn: 1, payload: rreq }, 1460);
    expect(segs).toHaveLength(1);
    expect(segs[0]!.length).toBe(46);
    expect(hex(encodeFpdu(segs[0]!, true))).toBe(SPEC_FPDU);
    // same with encodeDdpSegment
    expect(hex(encodeFpdu(encodeDdpSegment(untagged(Opcode.READ_REQUEST, 1, 1), rreq), true))).toBe(SPEC_FPDU);
  });

  test('fields at F+20.. (§3 byte map) and decode back', () => {
    const f = unhex(SPEC_FPDU);
    expect(be32(f, 20)).toBe(0x1234);
    expect(be64(f, 24)).toBe(0x10000n);
    expect(be32(f, 32)).toBe(0x1000);
    expect(be32(f, 36)).toBe(0x00abcd01);
    expect(be64(f, 40)).toBe(0x200000n);
    expect(decodeReadRequest(f.subarray(20, 48))).toEqual(fields);
    expect(decodeDdpHeader(f.subarray(2, 48))).toEqual(untagged(Opcode.READ_REQUEST, 1, 1));
  });

  test('random Read Request headers round-trip', () => {
    withSeed(0xdd04, (r) => {
      for (let i = 0; i < 200; i++) {
        const f = { sinkStag: r.u32(), sinkTo: r.u64(), size: r.u32(), srcStag: r.u32(), srcTo: r.u64() };
        expect(decodeReadRequest(encodeReadRequest(f))).toEqual(f);
      }
    });
  });
});

// -------------------------------------------------------------------------------------------------
interface PacketVector {
  name: string;
  fields: string;
  ulpdu_hex: string;
  ulpdu_length: number;
  mpa: { markers: boolean; crc: boolean };
  pad_length: number;
  crc: string;
  fpdu_wire_hex: string;
  fpdu_wire_length: number;
}
const PACKETS = loadVectors<{ packets: PacketVector[] }>('atomics.json').packets;
const packet = (id: string): PacketVector => {
  const p = PACKETS.find((v) => v.name.startsWith(`${id} `));
  if (!p) throw new Error(`atomics.json has no packet ${id}`);
  return p;
};
const ONES = (1n << 64n) - 1n;

describe('atomics.json packets V1–V6 (spec/rdmap-extensions.md §2, §3, §6, §9)', () => {
  const built: Record<string, { header: UntaggedHeader; body: Uint8Array; expected: unknown }> = {
    V1: {
      header: untagged(Opcode.ATOMIC_REQUEST, Qn.READ_REQUEST, 1),
      body: encodeAtomicRequest({
        aopcode: AOpCode.CMP_SWAP,
        requestId: 0x2a,
        stag: 0x12345678,
        to: 0x00007fff00001008n,
        addSwapData: 0xdeadbeefcafef00dn,
        addSwapMask: ONES,
        compareData: 0x1122334455667788n,
        compareMask: ONES,
      }),
      expected: {
        aopcode: 2,
        requestId: 0x2a,
        stag: 0x12345678,
        to: 0x00007fff00001008n,
        addSwapData: 0xdeadbeefcafef00dn,
        addSwapMask: ONES,
        compareData: 0x1122334455667788n,
        compareMask: ONES,
      },
    },
    V2: {
      header: untagged(Opcode.ATOMIC_REQUEST, Qn.READ_REQUEST, 2),
      body: encodeAtomicRequest({
        aopcode: AOpCode.FETCH_ADD,
        requestId: 0x2b,
        stag: 0x12345678,
        to: 0x00007fff00001010n,
        addSwapData: 0x0000000100000001n,
        addSwapMask: 0x8000000080000000n,
        compareData: 0n,
        compareMask: ONES,
      }),
      expected: {
        aopcode: 0,
        requestId: 0x2b,
        stag: 0x12345678,
        to: 0x00007fff00001010n,
        addSwapData: 0x0000000100000001n,
        addSwapMask: 0x8000000080000000n,
        compareData: 0n,
        compareMask: ONES,
      },
    },
    V3: {
      header: untagged(Opcode.ATOMIC_RESPONSE, Qn.ATOMIC_RESPONSE, 1),
      body: encodeAtomicResponse({ requestId: 0x2a, value: 0x1122334455667788n }),
      expected: { requestId: 0x2a, value: 0x1122334455667788n },
    },
    V4: {
      header: untagged(Opcode.ATOMIC_RESPONSE, Qn.ATOMIC_RESPONSE, 2),
      body: encodeAtomicResponse({ requestId: 0x2b, value: 0x00000001ffffffffn }),
      expected: { requestId: 0x2b, value: 0x00000001ffffffffn },
    },
    V5: { header: untagged(Opcode.IMMEDIATE, Qn.SEND, 7), body: unhex('0102030405060708'), expected: '0102030405060708' },
    V6: { header: untagged(Opcode.IMMEDIATE_SE, Qn.SEND, 8), body: unhex('0102030405060708'), expected: '0102030405060708' },
  };

  test('the JSON holds V1–V6', () => {
    for (const id of Object.keys(built)) expect(packet(id).name).toMatch(new RegExp(`^${id} `));
  });

  test.each(Object.keys(built))('%s: ULPDU and marker-free FPDU byte for byte', (id) => {
    const v = packet(id);
    const b = built[id]!;
    const ulpdu = encodeDdpSegment(b.header, b.body);
    expect(ulpdu.length).toBe(v.ulpdu_length);
    expect(hex(ulpdu)).toBe(v.ulpdu_hex.toLowerCase());
    // The codecs send these as one segment (spec/rdmap-extensions.md §1): the segmenter agrees.
    const segs = segmentMessage({ tagged: false, rsvdUlp: b.header.rsvdUlp, rsvdUlp2: 0, qn: b.header.qn, msn: b.header.msn, payload: b.body }, 1460);
    expect(segs.map(hex)).toEqual([v.ulpdu_hex.toLowerCase()]);
    expect(v.mpa).toEqual({ markers: false, crc: true });
    const fpdu = encodeFpdu(ulpdu, true);
    expect(fpdu.length).toBe(v.fpdu_wire_length);
    expect(hex(fpdu)).toBe(v.fpdu_wire_hex.toLowerCase());
    // CRC, LS octet first (spec/ddp-rdmap.md §3).
    const crc = new DataView(fpdu.buffer).getUint32(fpdu.length - 4, true);
    expect(crc).toBe(Number(v.crc));
    expect(v.pad_length).toBe(0);
  });

  test.each(Object.keys(built))('%s: decodes back to the listed fields', (id) => {
    const v = packet(id);
    const u = unhex(v.ulpdu_hex);
    const b = built[id]!;
    expect(decodeDdpHeader(u)).toEqual(b.header);
    const body = u.subarray(18);
    const op = rdmapOpcode(u[1]!);
    if (op === Opcode.ATOMIC_REQUEST) expect(decodeAtomicRequest(body)).toEqual(b.expected);
    else if (op === Opcode.ATOMIC_RESPONSE) expect(decodeAtomicResponse(body)).toEqual(b.expected);
    else expect(hex(body)).toBe(b.expected);
    // The field text of the vector agrees on QN/MSN.
    expect(v.fields).toContain(`QN ${b.header.qn}`);
    expect(v.fields).toContain(`MSN ${b.header.msn}`);
  });

  test('Atomic Request: AOpCode is the low nibble of the first word; reserved bits are sent 0 and ignored', () => {
    const body = encodeAtomicRequest({ aopcode: 0xf2, requestId: 1, stag: 2, to: 3n, addSwapData: 4n, addSwapMask: 5n, compareData: 6n, compareMask: 7n });
    expect(hex(body.subarray(0, 4))).toBe('00000002');
    const withRsvd = body.slice();
    withRsvd[0] = 0xff;
    withRsvd[3] = 0xf0;
    expect(decodeAtomicRequest(withRsvd).aopcode).toBe(0);
  });
});

// -------------------------------------------------------------------------------------------------
describe('Terminate header (spec/ddp-rdmap.md §2.4)', () => {
  test('the spec example FPDU byte for byte (DDP Invalid STag on a 512-octet Write)', () => {
    const offending = encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.WRITE), stag: 0xdeadbeef, to: 0x1000n }, new Uint8Array(512));
    const term = encodeTerminate({ layer: 1, etype: 1, code: 0, m: true, d: true, r: false, segmentLength: offending.length, ddpHeader: offending.slice(0, 14), rdmaHeader: null });
    const ulpdu = encodeDdpSegment(untagged(Opcode.TERMINATE, Qn.TERMINATE, 1), term);
    expect(hex(encodeFpdu(ulpdu, true))).toBe(
      spaced(`
      00 26 41 47 00 00 00 00 00 00 00 02 00 00 00 01  00 00 00 00 11 00 C0 00 02 0E C1 40 DE AD BE EF
      00 00 00 00 00 00 10 00 84 BB 21 00`),
    );
  });

  const header18 = () => encodeDdpSegment(untagged(Opcode.READ_REQUEST, 1, 9), new Uint8Array(0));
  const header14 = () => encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: 0x40, stag: 0x55, to: 0x77n }, new Uint8Array(0));
  const rdma = () => encodeReadRequest({ sinkStag: 1, sinkTo: 2n, size: 3, srcStag: 4, srcTo: 5n });

  const CASES: [string, TerminateFields, number][] = [
    ['D=0 R=0', { layer: 0, etype: 0, code: 0xff, m: false, d: false, r: false, segmentLength: 0, ddpHeader: null, rdmaHeader: null }, 4],
    ['D=1 R=0, tagged copy', { layer: 1, etype: 1, code: 0x03, m: true, d: true, r: false, segmentLength: 0x20e, ddpHeader: header14(), rdmaHeader: null }, 20],
    ['D=1 R=0, untagged copy', { layer: 1, etype: 2, code: 0x05, m: true, d: true, r: false, segmentLength: 0xffff, ddpHeader: header18(), rdmaHeader: null }, 24],
    ['D=1 R=1, Read Request copy', { layer: 0, etype: 1, code: 0x01, m: true, d: true, r: true, segmentLength: 46, ddpHeader: header18(), rdmaHeader: rdma() }, 52],
    ['D=1 M=0', { layer: 0, etype: 2, code: 0x07, m: false, d: true, r: false, segmentLength: 0, ddpHeader: header18(), rdmaHeader: null }, 24],
    ['D=0 R=1', { layer: 0, etype: 1, code: 0x00, m: false, d: false, r: true, segmentLength: 0, ddpHeader: null, rdmaHeader: rdma() }, 32],
  ];

  test.each(CASES)('%s: encode → decode round trip; size and octet layout', (_, f, size) => {
    const b = encodeTerminate(f);
    expect(b.length).toBe(size);
    expect(b[0]).toBe((f.layer << 4) | f.etype);
    expect(b[1]).toBe(f.code);
    expect(b[2]).toBe((f.m ? 0x80 : 0) | (f.d ? 0x40 : 0) | (f.r ? 0x20 : 0));
    expect(b[3]).toBe(0);
    if (f.d) {
      expect((b[4]! << 8) | b[5]!).toBe(f.segmentLength);
      expect(hex(b.subarray(6, 6 + f.ddpHeader!.length))).toBe(hex(f.ddpHeader!));
    }
    if (f.r) expect(hex(b.subarray(b.length - 28))).toBe(hex(f.rdmaHeader!));
    const tagged = f.d && (f.ddpHeader![0]! & 0x80) !== 0;
    expect(terminateLength(f.d, f.r, tagged)).toBe(size);
    const d = decodeTerminate(b)!;
    expect(d).not.toBeNull();
    expect(d.layer).toBe(f.layer);
    expect(d.etype).toBe(f.etype);
    expect(d.code).toBe(f.code);
    expect([d.m, d.d, d.r]).toEqual([f.m, f.d, f.r]);
    expect(d.segmentLength).toBe(f.d ? f.segmentLength : 0);
    expect(d.ddpHeader && hex(d.ddpHeader)).toBe(f.d ? hex(f.ddpHeader!) : null);
    expect(d.rdmaHeader && hex(d.rdmaHeader)).toBe(f.r ? hex(f.rdmaHeader!) : null);
  });

  test('reserved bits are ignored on decode; truncated Terminates decode to null', () => {
    const b = encodeTerminate(CASES[2]![1]);
    const noisy = b.slice();
    noisy[2] = noisy[2]! | 0x1f;
    noisy[3] = 0xff;
    expect(decodeTerminate(noisy)).toMatchObject({ layer: 1, etype: 2, code: 5, m: true, d: true, r: false, segmentLength: 0xffff });
    expect(decodeTerminate(b.subarray(0, 3))).toBeNull();
    expect(decodeTerminate(b.subarray(0, b.length - 1))).toBeNull();
    const withR = encodeTerminate(CASES[3]![1]);
    expect(decodeTerminate(withR.subarray(0, withR.length - 1))).toBeNull();
  });

  test('random Terminates round-trip', () => {
    withSeed(0xdd05, (r) => {
      for (let i = 0; i < 300; i++) {
        const d = r.bool();
        const rr = r.bool();
        const tagged = r.bool();
        const ddpHeader = d ? (tagged ? Uint8Array.from([0x80 | r.int(0, 0x7f), ...r.bytes(13)]) : Uint8Array.from([r.int(0, 0x7f), ...r.bytes(17)])) : null;
        const f: TerminateFields = {
          layer: r.int(0, 15),
          etype: r.int(0, 15),
          code: r.int(0, 255),
          m: r.bool(),
          d,
          r: rr,
          segmentLength: d ? r.int(0, 0xffff) : 0,
          ddpHeader,
          rdmaHeader: rr ? r.bytes(28) : null,
        };
        const b = encodeTerminate(f);
        expect(b.length).toBe(terminateLength(d, rr, tagged));
        const got = decodeTerminate(b)!;
        expect({ ...got, ddpHeader: got.ddpHeader && hex(got.ddpHeader), rdmaHeader: got.rdmaHeader && hex(got.rdmaHeader) }).toEqual({
          ...f,
          ddpHeader: ddpHeader && hex(ddpHeader),
          rdmaHeader: f.rdmaHeader && hex(f.rdmaHeader),
        });
      }
    });
  });
});
