import { describe, expect, test } from 'vitest';
import { PcapngBlock, PcapngFile, PCAPNG_BYTE_ORDER_MAGIC } from '../sim/pcap/pcapng-file';
import { TcpConversation } from '../sim/pcap/tcp-frames';
import { epochNs } from './support/failure-capture';
import { runTshark, tsharkFields } from './support/tshark';

/**
 * The pcapng writer (draft-ietf-opsawg-pcapng) read back by the real tshark: nanosecond
 * timestamps (if_tsresol = 9) and per-packet comments (EPB opt_comment), which the failure
 * captures of `rnic cosim` rely on.
 */

const EPOCH_NS = 1_700_000_000_000_000_000n;
/** Nanoseconds past the epoch: one that microseconds cannot hold, one past 2^32 ns. */
const OFFSETS_NS = [0n, 4n, 1_000n, 123_456_789n, 5_000_000_007n];

function conversation(): TcpConversation {
  const c = new TcpConversation({ mac: '02:00:00:00:00:01', ip: '10.0.0.1', port: 49152, isn: 7 }, { mac: '02:00:00:00:00:02', ip: '10.0.0.2', port: 40000, isn: 0xfffffff0 });
  c.handshake();
  c.send('initiator', new Uint8Array(5).fill(0xa5));
  c.send('responder', new Uint8Array(3).fill(0x5a)); // 3 octets: the EPB pads the frame to 32 bits
  return c;
}

function capture(comments: Record<number, string>): Uint8Array {
  const f = new PcapngFile({ comment: 'a test section', application: 'rnic test' });
  conversation()
    .frames()
    .forEach((r, i) => f.add(r.frame, EPOCH_NS + OFFSETS_NS[i]!, comments[i]));
  return f.bytes();
}

describe('pcapng files tshark reads', () => {
  test('every frame keeps its nanosecond timestamp and the comment of its Enhanced Packet Block', () => {
    const text = 'first difference from the model: opcode RDMA Read Request (0x1), «ü»';
    const rows = tsharkFields(capture({ 3: text }), ['frame.number', 'frame.time_epoch', 'frame.comment', 'tcp.len', 'frame.len']);
    expect(rows).toHaveLength(OFFSETS_NS.length);
    rows.forEach((row, i) => expect(epochNs(row['frame.time_epoch']!), `frame ${i + 1}`).toBe(EPOCH_NS + OFFSETS_NS[i]!));
    expect(rows.map((r) => r['frame.comment'])).toEqual(['', '', '', text, '']);
    expect(rows.map((r) => r['tcp.len'])).toEqual(['0', '0', '0', '5', '3']);
    // Captured whole, not padded: 14 Ethernet + 20 IPv4 + 20 TCP + payload.
    expect(rows[4]!['frame.len']).toBe(String(54 + 3));
  });

  test('the file is a section of a nanosecond Ethernet interface, and the same frames give the same octets', () => {
    const bytes = capture({});
    const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    expect(v.getUint32(0, true)).toBe(PcapngBlock.SHB);
    expect(v.getUint32(8, true)).toBe(PCAPNG_BYTE_ORDER_MAGIC);
    // Every block's total length is a multiple of 4, and repeated at its end.
    const types: number[] = [];
    for (let at = 0; at < bytes.length; ) {
      const len = v.getUint32(at + 4, true);
      expect(len % 4).toBe(0);
      expect(v.getUint32(at + len - 4, true)).toBe(len);
      types.push(v.getUint32(at, true));
      at += len;
    }
    expect(types).toEqual([PcapngBlock.SHB, PcapngBlock.IDB, ...OFFSETS_NS.map(() => PcapngBlock.EPB)]);
    expect(Buffer.compare(bytes, capture({}))).toBe(0);
    // tshark names the resolution and reads no error.
    const verbose = runTshark(bytes, ['-V', '-c', '1']);
    expect(verbose).toMatch(/Arrival Time: Nov 14, 2023 22:13:20\.000000000/);
    expect(verbose).not.toMatch(/malformed|error/i);
  });
});
