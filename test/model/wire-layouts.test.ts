import { describe, expect, test } from 'vitest';
import { TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { decodeDdpHeader, encodeDdpSegment } from '../../ts-model/ddp/header';
import {
  ATOMIC_REQUEST_HEADER_SIZE,
  ATOMIC_RESPONSE_HEADER_SIZE,
  IMMEDIATE_DATA_SIZE,
  READ_REQUEST_HEADER_SIZE,
  TERM_SEGMENT_LENGTH_SIZE,
  TERMINATE_HEADER_SIZE,
} from '../../ts-model/rdmap/constants';
import { encodeAtomicRequest, encodeAtomicResponse, encodeReadRequest, encodeTerminate } from '../../ts-model/rdmap/headers';
import * as L from '../../ts-model/wire/layouts';

/** The big-endian number in `b` at a field of a wire layout. */
const at = (b: Uint8Array, f: L.WireField): bigint => b.subarray(f.offset, f.offset + f.size).reduce((acc, x) => (acc << 8n) | BigInt(x), 0n);

/**
 * The wire layouts the RTL decodes and builds headers with (ts-model/wire/layouts.ts) against the
 * model's codecs: every field an encoder writes sits where the table says, and the sizes agree
 * with the RFCs' constants. One table, two users.
 */
describe('wire layouts of the DDP and RDMAP headers', () => {
  test('sizes equal the header sizes of RFC 5041, RFC 5040 and RFC 7306', () => {
    expect([L.DDP_TAGGED.SIZE, L.DDP_UNTAGGED.SIZE]).toEqual([TAGGED_HEADER_SIZE, UNTAGGED_HEADER_SIZE]);
    expect([L.READ_REQUEST.SIZE, L.ATOMIC_REQUEST.SIZE, L.ATOMIC_RESPONSE.SIZE, L.IMMEDIATE_DATA.SIZE]).toEqual([
      READ_REQUEST_HEADER_SIZE, ATOMIC_REQUEST_HEADER_SIZE, ATOMIC_RESPONSE_HEADER_SIZE, IMMEDIATE_DATA_SIZE,
    ]);
    expect([L.TERMINATE.SIZE, L.TERM_SEGMENT_LENGTH.SIZE]).toEqual([TERMINATE_HEADER_SIZE, TERM_SEGMENT_LENGTH_SIZE]);
  });

  test('the DDP header codec writes and reads each field at its offset', () => {
    const t = encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: 0x42, stag: 0x11223344, to: 0x5566778899aabbccn }, new Uint8Array(0));
    expect([at(t, L.DDP_TAGGED.rsvd_ulp), at(t, L.DDP_TAGGED.stag), at(t, L.DDP_TAGGED.to)]).toEqual([0x42n, 0x11223344n, 0x5566778899aabbccn]);
    const u = encodeDdpSegment({ tagged: false, last: false, dv: 1, rsvdUlp: 0x43, rsvdUlp2: 0xdeadbeef, qn: 2, msn: 0x01020304, mo: 0x0a0b0c0d }, new Uint8Array(0));
    expect([L.DDP_UNTAGGED.rsvd_ulp2, L.DDP_UNTAGGED.qn, L.DDP_UNTAGGED.msn, L.DDP_UNTAGGED.mo].map((f) => at(u, f))).toEqual([0xdeadbeefn, 2n, 0x01020304n, 0x0a0b0c0dn]);
    expect(decodeDdpHeader(u)).toMatchObject({ rsvdUlp2: 0xdeadbeef, qn: 2, msn: 0x01020304, mo: 0x0a0b0c0d });
  });

  test('the RDMAP codecs write each field at its offset', () => {
    const rr = encodeReadRequest({ sinkStag: 1, sinkTo: 2n, size: 3, srcStag: 4, srcTo: 5n });
    expect([L.READ_REQUEST.sink_stag, L.READ_REQUEST.sink_to, L.READ_REQUEST.size, L.READ_REQUEST.src_stag, L.READ_REQUEST.src_to].map((f) => at(rr, f))).toEqual([1n, 2n, 3n, 4n, 5n]);
    const ar = encodeAtomicRequest({ aopcode: 2, requestId: 6, stag: 7, to: 8n, addSwapData: 9n, addSwapMask: 10n, compareData: 11n, compareMask: 12n });
    const A = L.ATOMIC_REQUEST;
    expect([A.aopcode_word, A.request_id, A.stag, A.to, A.add_swap, A.add_swap_mask, A.compare, A.compare_mask].map((f) => at(ar, f))).toEqual([2n, 6n, 7n, 8n, 9n, 10n, 11n, 12n]);
    const rs = encodeAtomicResponse({ requestId: 13, value: 14n });
    expect([at(rs, L.ATOMIC_RESPONSE.request_id), at(rs, L.ATOMIC_RESPONSE.value)]).toEqual([13n, 14n]);
    const term = encodeTerminate({ layer: 1, etype: 2, code: 3, m: true, d: false, r: false, segmentLength: 0, ddpHeader: null, rdmaHeader: null });
    expect([at(term, L.TERMINATE.layer_etype), at(term, L.TERMINATE.code), at(term, L.TERMINATE.flags) >> 13n]).toEqual([0x12n, 3n, 4n]);
  });
});
