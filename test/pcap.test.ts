import { describe, expect, test } from 'vitest';
import {
  MpaFramer,
  corruptCrc,
  setUpConnection,
  type ConnectionResult,
  type MpaEndpointInput,
} from '../ts-model/mpa';
import {
  LINKTYPE_ETHERNET,
  PCAP_FILE_HEADER_SIZE,
  PCAP_MAGIC_MICROS,
  PCAP_RECORD_HEADER_SIZE,
  PCAP_SNAPLEN,
} from '../sim/pcap/pcap-file';
import {
  DEFAULT_EPOCH_MICROS,
  DEFAULT_FRAME_SPACING_MICROS,
  ETHERNET_HEADER_SIZE,
  IPV4_HEADER_SIZE,
  TcpConversation,
  TcpFlag,
  type TcpEndpoint,
} from '../sim/pcap/tcp-frames';
import { hex, unhex } from './support/random';
import {
  ChecksumStatus,
  TSHARK_ABSOLUTE_SEQ,
  TSHARK_CHECK_CHECKSUMS,
  tsharkCrcVerdicts,
  tsharkFields,
} from './support/tshark';
import { loadVectors, num } from './support/vectors';

/**
 * Captures built by sim/pcap, read back by the real tshark (spec/mpa.md §9): TCP that Wireshark
 * accepts as a clean connection, and MPA traffic (markers.json, fpdu.json) that its iWARP
 * dissectors decode with the expected CRC verdicts, FPDUPTRs and DDP fields.
 */

const markerFile = loadVectors<any>('markers.json');
const [requestV, replyV, fpdu1V, fpdu2V] = markerFile.vectors;
const fpduUlpdus: Uint8Array[] = loadVectors<{ vectors: { ulpdu_hex: string }[] }>('fpdu.json').vectors.map((v) =>
  unhex(v.ulpdu_hex),
);

const host = (n: number, port: number, isn: number): TcpEndpoint => ({
  mac: `02:00:00:00:00:0${n}`,
  ip: `10.0.0.${n}`,
  port,
  isn,
});
const CLIENT_PORT = 49152;
const MPA_PORT = 5000;

/** Independent RFC 1071 check: the one's-complement sum of a region including its checksum is 0xFFFF. */
function sumsToAllOnes(words: Uint8Array): boolean {
  let sum = 0n;
  for (let i = 0; i < words.length; i += 2) sum += BigInt(words[i]! * 256 + (words[i + 1] ?? 0));
  while (sum >> 16n) sum = (sum & 0xffffn) + (sum >> 16n);
  return sum === 0xffffn;
}

function tcpChecksumOk(frame: Uint8Array): boolean {
  const ip = frame.subarray(ETHERNET_HEADER_SIZE, ETHERNET_HEADER_SIZE + IPV4_HEADER_SIZE);
  const segment = frame.subarray(ETHERNET_HEADER_SIZE + IPV4_HEADER_SIZE);
  const pseudo = [...ip.subarray(12, 20), 0, ip[9]!, segment.length >> 8, segment.length & 0xff];
  return sumsToAllOnes(new Uint8Array([...pseudo, ...segment]));
}

interface PcapRecordView {
  seconds: number;
  micros: number;
  inclLen: number;
  origLen: number;
  data: Uint8Array;
}

function readPcap(bytes: Uint8Array): { header: DataView; records: PcapRecordView[] } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  const records: PcapRecordView[] = [];
  let at = PCAP_FILE_HEADER_SIZE;
  while (at < bytes.length) {
    const inclLen = view.getUint32(at + 8, true);
    const start = at + PCAP_RECORD_HEADER_SIZE;
    records.push({
      seconds: view.getUint32(at, true),
      micros: view.getUint32(at + 4, true),
      inclLen,
      origLen: view.getUint32(at + 12, true),
      data: bytes.subarray(start, start + inclLen),
    });
    at = start + inclLen;
  }
  expect(at).toBe(bytes.length);
  return { header: view, records };
}

/** ISNs just below 2^32: both directions' data wraps past sequence number 0. */
const WRAP_ISN_INITIATOR = 0xfffffff0;
const WRAP_ISN_RESPONDER = 0xfffffffa;
const WRAP_DATA = 40;
const WRAP_REPLY = 11;

function wrapConversation(): TcpConversation {
  const c = new TcpConversation(host(1, CLIENT_PORT, WRAP_ISN_INITIATOR), host(2, MPA_PORT + 1, WRAP_ISN_RESPONDER));
  c.handshake();
  c.send('initiator', new Uint8Array(WRAP_DATA).map((_, i) => i + 1));
  c.send('responder', new Uint8Array(WRAP_REPLY).map((_, i) => 0x80 + i));
  c.close();
  return c;
}

describe('pcap file and TCP frames', () => {
  const conv = wrapConversation();
  const pcap = conv.pcap();

  test('libpcap header, record lengths and deterministic timestamps', () => {
    const { header, records } = readPcap(pcap);
    expect(hex(pcap.subarray(0, 4))).toBe('d4c3b2a1');
    expect(header.getUint32(0, true)).toBe(PCAP_MAGIC_MICROS);
    expect([header.getUint16(4, true), header.getUint16(6, true)]).toEqual([2, 4]);
    expect(header.getInt32(8, true)).toBe(0);
    expect(header.getUint32(16, true)).toBe(PCAP_SNAPLEN);
    expect(header.getUint32(20, true)).toBe(LINKTYPE_ETHERNET);
    const frames = conv.frames();
    expect(records).toHaveLength(frames.length);
    records.forEach((r, i) => {
      const t = DEFAULT_EPOCH_MICROS + BigInt(i) * DEFAULT_FRAME_SPACING_MICROS;
      expect([r.seconds, r.micros]).toEqual([Number(t / 1_000_000n), Number(t % 1_000_000n)]);
      expect(r.inclLen).toBe(r.origLen);
      expect(hex(r.data)).toBe(hex(frames[i]!.frame));
    });
    expect(hex(wrapConversation().pcap())).toBe(hex(pcap));
  });

  test('IPv4 and TCP checksums pass an independent RFC 1071 check', () => {
    for (const { frame } of conv.frames()) {
      expect(sumsToAllOnes(frame.subarray(ETHERNET_HEADER_SIZE, ETHERNET_HEADER_SIZE + IPV4_HEADER_SIZE))).toBe(true);
      expect(tcpChecksumOk(frame)).toBe(true);
    }
    // An odd payload exercises the zero pad of the last octet (RFC 1071 §4.1).
    expect(conv.frames().some((f) => f.payloadLength % 2 === 1)).toBe(true);
  });

  test('tshark: checksums good, header fields as built, clean TCP analysis, raw sequence numbers wrap', () => {
    const fields = [
      'ip.checksum.status',
      'tcp.checksum.status',
      'ip.id',
      'ip.flags.df',
      'ip.ttl',
      'tcp.hdr_len',
      'tcp.window_size_value',
      'tcp.flags',
      'tcp.seq',
      'tcp.ack',
      'tcp.len',
      'tcp.analysis.flags',
    ];
    const rows = tsharkFields(pcap, fields, [...TSHARK_CHECK_CHECKSUMS, ...TSHARK_ABSOLUTE_SEQ]);
    const frames = conv.frames();
    expect(rows).toHaveLength(frames.length);
    const ipIds = { initiator: 0, responder: 0 };
    rows.forEach((row, i) => {
      const f = frames[i]!;
      expect(row['ip.checksum.status']).toBe(ChecksumStatus.GOOD);
      expect(row['tcp.checksum.status']).toBe(ChecksumStatus.GOOD);
      expect(row['ip.flags.df']).toBe('1');
      expect(row['ip.ttl']).toBe('64');
      expect(row['tcp.hdr_len']).toBe('20');
      expect(row['tcp.window_size_value']).toBe('65535');
      expect(Number(row['tcp.flags'])).toBe(f.flags);
      expect(Number(row['tcp.seq'])).toBe(f.seq);
      expect(Number(row['tcp.len'])).toBe(f.payloadLength);
      expect(row['tcp.analysis.flags']).toBe('');
      // IP ID counts up per host.
      const id = Number(row['ip.id']);
      if (ipIds[f.from]) expect(id).toBe(ipIds[f.from] + 1);
      ipIds[f.from] = id;
    });
    const [syn, synAck, ack, data, reply] = rows;
    expect([syn!['tcp.flags'], syn!['tcp.seq']]).toEqual(['0x0002', String(WRAP_ISN_INITIATOR)]);
    expect([synAck!['tcp.flags'], synAck!['tcp.seq'], synAck!['tcp.ack']]).toEqual([
      '0x0012',
      String(WRAP_ISN_RESPONDER),
      String(WRAP_ISN_INITIATOR + 1),
    ]);
    expect([ack!['tcp.seq'], ack!['tcp.ack']]).toEqual([String(WRAP_ISN_INITIATOR + 1), String(WRAP_ISN_RESPONDER + 1)]);
    expect(data!['tcp.seq']).toBe(String(WRAP_ISN_INITIATOR + 1));
    expect(reply!['tcp.ack']).toBe(String((WRAP_ISN_INITIATOR + 1 + WRAP_DATA) >>> 0));
    // FIN of each side sits past the wrap; the final ACK covers the responder's FIN.
    expect(conv.nextSeq('initiator')).toBe((WRAP_ISN_INITIATOR + 1 + WRAP_DATA + 1) >>> 0);
    expect(conv.nextSeq('responder')).toBe((WRAP_ISN_RESPONDER + 1 + WRAP_REPLY + 1) >>> 0);
    expect(Number(rows.at(-1)!['tcp.ack'])).toBe(conv.nextSeq('responder'));
    expect(Number(rows.at(-1)!['tcp.flags'])).toBe(TcpFlag.ACK);
  });

  test('a retransmission carries the given sequence number and leaves nextSeq alone', () => {
    const c = new TcpConversation(host(1, CLIENT_PORT, WRAP_ISN_INITIATOR), host(2, MPA_PORT, WRAP_ISN_RESPONDER));
    c.handshake();
    const first = c.nextSeq('initiator');
    c.send('initiator', new Uint8Array(WRAP_DATA));
    const after = c.nextSeq('initiator');
    c.send('initiator', new Uint8Array(WRAP_DATA), { seq: first });
    expect(c.nextSeq('initiator')).toBe(after);
    expect(c.frames().at(-1)!.seq).toBe(first);
  });
});

/** The capture of an MPA connection: handshake, Request, Reply, then the initiator's FPDUs, one per segment. */
function mpaCapture(request: Uint8Array, reply: Uint8Array, fpdus: readonly Uint8Array[], isns: [number, number]): Uint8Array {
  const c = new TcpConversation(host(1, CLIENT_PORT, isns[0]), host(2, MPA_PORT, isns[1]));
  c.handshake();
  c.send('initiator', request);
  c.send('responder', reply);
  for (const w of fpdus) c.send('initiator', w);
  c.close();
  return c.pcap();
}

/** Handshake (3) + Request + Reply: the first FPDU is frame 6. */
const FIRST_FPDU_FRAME = 6;

/** The initiator's FPDUs framed by the model; FPDU `corrupt` (if given) with a flipped CRC bit. */
function modelCapture(conn: ConnectionResult, ulpdus: readonly Uint8Array[], corrupt?: number): Uint8Array {
  expect(conn.status).toBe('established');
  const framer = new MpaFramer(conn.initiatorToResponder);
  const wires = ulpdus.map((u, i) => {
    const f = framer.frame(u);
    return i === corrupt ? corruptCrc(f) : f.wire;
  });
  const isns: [number, number] = [(conn.request.seq - 1) >>> 0, (conn.reply!.seq - 1) >>> 0];
  return mpaCapture(conn.request.octets, conn.reply!.octets, wires, isns);
}

describe('markers.json worked example through tshark', () => {
  const isns: [number, number] = [num(markerFile.connection.initiator_isn), num(markerFile.connection.responder_isn)];
  const pcap = mpaCapture(unhex(requestV.hex), unhex(replyV.hex), [unhex(fpdu1V.wire_hex), unhex(fpdu2V.wire_hex)], isns);

  test('both FPDUs: Good CRC32, FPDUPTR 0 and 488,1000, ULPDU_Length 14 and 1018, MSN 1', () => {
    expect(tsharkCrcVerdicts(pcap).map((v) => [v.frame, v.good])).toEqual([
      [FIRST_FPDU_FRAME, true],
      [FIRST_FPDU_FRAME + 1, true],
    ]);
    const fields = ['iwarp_mpa.key.req', 'iwarp_mpa.key.rep', 'iwarp_mpa.ulpdulength', 'iwarp_mpa.marker_fpduptr', 'iwarp_ddp.msn'];
    const rows = tsharkFields(pcap, fields);
    expect(rows[FIRST_FPDU_FRAME - 3]!['iwarp_mpa.key.req']).not.toBe('');
    expect(rows[FIRST_FPDU_FRAME - 2]!['iwarp_mpa.key.rep']).not.toBe('');
    const [f1, f2] = [rows[FIRST_FPDU_FRAME - 1]!, rows[FIRST_FPDU_FRAME]!];
    expect([f1['iwarp_mpa.ulpdulength'], f1['iwarp_mpa.marker_fpduptr']]).toEqual(['14', '0']);
    expect([f2['iwarp_mpa.ulpdulength'], f2['iwarp_mpa.marker_fpduptr'], f2['iwarp_ddp.msn']]).toEqual(['1018', '488,1000', '1']);
  });

  test('the model builds the identical capture', () => {
    const conn = setUpConnection({
      initiator: { markers: true, crc: true, ird: 16, ord: 16, rtr: ['write', 'read'] },
      responder: { markers: true, crc: true, ird: 16, ord: 8, rtr: ['write'] },
      initiatorIsn: isns[0],
      responderIsn: isns[1],
    });
    const fromModel = modelCapture(conn, [unhex(fpdu1V.ulpdu_hex), unhex(fpdu2V.ulpdu_hex)]);
    expect(hex(fromModel)).toBe(hex(pcap));
  });
});

const markerFree = (revision: 1 | 2): MpaEndpointInput => ({ revision, markers: false, crc: true });
const CORRUPTED = 2;

describe.each([1, 2] as const)('marker-free, CRC on, Rev %i: fpdu.json ULPDUs framed by the model', (revision) => {
  const conn = setUpConnection({
    initiator: markerFree(revision),
    responder: markerFree(revision),
    initiatorIsn: 0x0badcafe,
    responderIsn: 0xfffffff8,
  });

  test('every FPDU: Good CRC32', () => {
    const pcap = modelCapture(conn, fpduUlpdus);
    const revs = tsharkFields(pcap, ['iwarp_mpa.rev']).map((r) => r['iwarp_mpa.rev']);
    expect(revs.slice(FIRST_FPDU_FRAME - 3, FIRST_FPDU_FRAME - 1)).toEqual([String(revision), String(revision)]);
    const verdicts = tsharkCrcVerdicts(pcap);
    expect(verdicts.map((v) => [v.frame, v.good])).toEqual(fpduUlpdus.map((_, i) => [FIRST_FPDU_FRAME + i, true]));
  });

  test('one FPDU with a corrupted CRC: that frame Bad CRC32, the others good', () => {
    const verdicts = tsharkCrcVerdicts(modelCapture(conn, fpduUlpdus, CORRUPTED));
    expect(verdicts.map((v) => [v.frame, v.good])).toEqual(
      fpduUlpdus.map((_, i) => [FIRST_FPDU_FRAME + i, i !== CORRUPTED]),
    );
    expect(verdicts[CORRUPTED]!.showname).toMatch(/\(Bad CRC32, should be 0x[0-9a-f]{8}\)/);
  });
});

describe('CRC off on both sides', () => {
  const off: MpaEndpointInput = { markers: false, crc: false };
  const conn = setUpConnection({ initiator: off, responder: off, initiatorIsn: 0x01020304, responderIsn: 0x05060708 });

  test('tshark shows iwarp_mpa.crc and gives no CRC verdict', () => {
    expect(conn.crc).toBe(false);
    const pcap = modelCapture(conn, fpduUlpdus);
    const rows = tsharkFields(pcap, ['iwarp_mpa.ulpdulength', 'iwarp_mpa.crc', 'iwarp_mpa.crc_check']);
    const fpduRows = rows.slice(FIRST_FPDU_FRAME - 1, FIRST_FPDU_FRAME - 1 + fpduUlpdus.length);
    expect(fpduRows.map((r) => Number(r['iwarp_mpa.ulpdulength']))).toEqual(fpduUlpdus.map((u) => u.length));
    for (const r of fpduRows) {
      // The CRC field is sent as zero when CRC is off (spec/mpa.md §3.4).
      expect(r['iwarp_mpa.crc']).toBe('0x00000000');
      expect(r['iwarp_mpa.crc_check']).toBe('');
    }
    expect(tsharkCrcVerdicts(pcap)).toEqual([]);
  });
});
