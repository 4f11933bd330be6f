import { expect } from 'vitest';
import type { MpaStreamConfig } from '../../ts-model/mpa';

/**
 * What the Wireshark interop tests expect of an FPDU tshark decodes, from the wire octets alone:
 * markers found by sequence position, DDP and RDMAP headers read at their RFC offsets (RFC 5044
 * §4.3, RFC 5041 §4, RFC 5040 §4), and the FPDUs Wireshark 4.0.17 is known to misread.
 */

/** The MPA, DDP and RDMAP fields the interop tests read, with frame.number. */
export const IWARP_FIELDS = [
  'frame.number',
  'iwarp_mpa.ulpdulength',
  'iwarp_mpa.marker_fpduptr',
  'iwarp_ddp.tagged_flag',
  'iwarp_ddp.last_flag',
  'iwarp_ddp.stag',
  'iwarp_ddp.tagged_offset',
  'iwarp_ddp.qn',
  'iwarp_ddp.msn',
  'iwarp_ddp.mo',
  'iwarp_rdma.opcode',
  'iwarp_rdma.inval_stag',
  'iwarp_rdma.sinkstag',
  'iwarp_rdma.sinkto',
  'iwarp_rdma.rdmardsz',
  'iwarp_rdma.srcstag',
  'iwarp_rdma.srcto',
  'iwarp_rdma.atomic.opcode',
  'iwarp_rdma.atomic.request_identifier',
  'iwarp_rdma.atomic.remote_stag',
  'iwarp_rdma.atomic.remote_tagged_offset',
  'iwarp_rdma.atomic.original_request_identifier',
  'iwarp_rdma.atomic.original_remote_data_value',
  'iwarp_rdma.term_layer',
  'iwarp_rdma.term_etype_rdma',
  'iwarp_rdma.term_etype_ddp',
  'iwarp_rdma.term_etype_llp',
  'iwarp_rdma.term_errcode_rdma',
  'iwarp_rdma.term_errcode_ddp_tagged',
  'iwarp_rdma.term_errcode_ddp_untagged',
  'iwarp_rdma.term_errcode_llp',
  'iwarp_rdma.term_hdrct_m',
  'iwarp_rdma.hdrct_d',
  'iwarp_rdma.hdrct_r',
];

/** tshark prints numbers as 0x… hex or decimal, by field. */
const n = (s: string | undefined): bigint | undefined => (s === undefined || s === '' ? undefined : BigInt(s));

export interface WireFpdu {
  readonly ulpdu: Uint8Array;
  readonly fpduptrs: number[];
}

/** One TCP segment's payload at its sequence number. */
export interface WireSegment {
  readonly seq: number;
  readonly payload: Uint8Array;
}

/** Strips markers by position (spec/mpa.md §4.3) and returns the ULPDU and the FPDUPTRs. */
export function fromWire(seg: WireSegment, dir: Pick<MpaStreamConfig, 's0' | 'markers'>): WireFpdu {
  const mf: number[] = [];
  const fpduptrs: number[] = [];
  for (let p = 0; p < seg.payload.length; ) {
    if (dir.markers && ((seg.seq + p - dir.s0) >>> 0) % 512 === 0) {
      fpduptrs.push((seg.payload[p + 2]! << 8) | seg.payload[p + 3]!);
      p += 4;
    } else mf.push(seg.payload[p++]!);
  }
  const L = (mf[0]! << 8) | mf[1]!;
  return { ulpdu: Uint8Array.from(mf.slice(2, 2 + L)), fpduptrs };
}

/**
 * A known Wireshark 4.0.17 bug, not a model error. When an FPDU ends exactly where the next marker
 * falls, Wireshark's number_of_markers() counts that marker as the FPDU's own; by spec/mpa.md §4.5
 * it is the next FPDU's leading marker. The FPDU then looks 4 octets short and is left undecoded.
 * tcp_dissect_pdus then takes 4 octets of the next segment in that direction, whose FPDU starts
 * with that leading marker, so Wireshark also misreads that FPDU's markers and CRC. Only these
 * two cases are exempt; every other FPDU must decode exactly.
 */
export function wiresharkMarkerGap(seg: WireSegment, dir: Pick<MpaStreamConfig, 's0' | 'markers'>): boolean {
  if (!dir.markers) return false;
  const endsOnMarker = ((seg.seq + seg.payload.length - dir.s0) >>> 0) % 512 === 0;
  const leadingAfterS0 = seg.seq !== dir.s0 && ((seg.seq - dir.s0) >>> 0) % 512 === 0;
  return endsOnMarker || leadingAfterS0;
}

/** The DDP and RDMAP fields tshark decoded from ULPDU `u`, each against the octet at its RFC offset. */
export function checkDdpRdmap(row: Record<string, string>, u: Uint8Array, where: string): void {
  const v = new DataView(u.buffer, u.byteOffset, u.length);
  const num = (field: string, want: bigint) => expect(n(row[field]), `${where}: ${field}`).toBe(want);
  const flag = (field: string, want: boolean) => expect(row[field], `${where}: ${field}`).toBe(want ? '1' : '0');
  const tagged = (u[0]! & 0x80) !== 0;
  const opcode = u[1]! & 0x0f;
  flag('iwarp_ddp.tagged_flag', tagged);
  flag('iwarp_ddp.last_flag', (u[0]! & 0x40) !== 0);
  // tshark has no names for opcodes 0x8/0x9 ("Unknown"): their raw octet was checked above.
  num('iwarp_rdma.opcode', BigInt(opcode));
  if (tagged) {
    num('iwarp_ddp.stag', BigInt(v.getUint32(2)));
    num('iwarp_ddp.tagged_offset', v.getBigUint64(6));
    return;
  }
  num('iwarp_ddp.qn', BigInt(v.getUint32(6)));
  num('iwarp_ddp.msn', BigInt(v.getUint32(10)));
  num('iwarp_ddp.mo', BigInt(v.getUint32(14)));
  if (opcode === 0x4 || opcode === 0x6) num('iwarp_rdma.inval_stag', BigInt(v.getUint32(2)));
  if (opcode === 0x1) {
    num('iwarp_rdma.sinkstag', BigInt(v.getUint32(18)));
    num('iwarp_rdma.sinkto', v.getBigUint64(22));
    num('iwarp_rdma.rdmardsz', BigInt(v.getUint32(30)));
    num('iwarp_rdma.srcstag', BigInt(v.getUint32(34)));
    num('iwarp_rdma.srcto', v.getBigUint64(38));
  }
  if (opcode === 0xa) {
    num('iwarp_rdma.atomic.opcode', BigInt(v.getUint32(18) & 0xf));
    num('iwarp_rdma.atomic.request_identifier', BigInt(v.getUint32(22)));
    num('iwarp_rdma.atomic.remote_stag', BigInt(v.getUint32(26)));
    num('iwarp_rdma.atomic.remote_tagged_offset', v.getBigUint64(30));
  }
  if (opcode === 0xb) {
    num('iwarp_rdma.atomic.original_request_identifier', BigInt(v.getUint32(18)));
    // Wireshark labels this field "Original Request Identifier" too (spec/mpa.md §9); the value is right.
    num('iwarp_rdma.atomic.original_remote_data_value', v.getBigUint64(22));
  }
  if (opcode === 0x7) {
    const layer = u[18]! >> 4;
    const etype = u[18]! & 0xf;
    num('iwarp_rdma.term_layer', BigInt(layer));
    const suffix = layer === 0 ? 'rdma' : layer === 1 ? 'ddp' : 'llp';
    num(`iwarp_rdma.term_etype_${suffix}`, BigInt(etype));
    const code = layer === 1 ? (etype === 1 ? 'ddp_tagged' : etype === 2 ? 'ddp_untagged' : null) : suffix;
    if (code) num(`iwarp_rdma.term_errcode_${code}`, BigInt(u[19]!));
    flag('iwarp_rdma.term_hdrct_m', (u[20]! & 0x80) !== 0);
    flag('iwarp_rdma.hdrct_d', (u[20]! & 0x40) !== 0);
    flag('iwarp_rdma.hdrct_r', (u[20]! & 0x20) !== 0);
  }
}
