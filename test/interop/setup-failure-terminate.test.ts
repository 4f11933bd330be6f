import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { writePcap } from '../../cli/scenario-cli';
import {
  ETYPE_MPA,
  LAYER_LLP,
  MARKER_PERIOD,
  MARKER_SIZE,
  MpaDeframer,
  MpaErrorCode,
  MpaFlag,
  parseMpaFrame,
  seqAdd,
  type MpaStreamConfig,
} from '../../ts-model/mpa';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { Opcode } from '../../ts-model/rdmap/constants';
import { decodeTerminate } from '../../ts-model/rdmap/headers';
import type { TcpSegmentRecord } from '../../ts-model/link/iwarp-link';
import { runScenario, type ScenarioResult } from '../../ts-model/scenario/run';
import { parseScenario } from '../../ts-model/scenario/schema';
import { tsharkCrcVerdicts, tsharkFields } from '../support/tshark';

/**
 * A start-up failure after the Reply (spec/mpa.md §8.4): the initiator's first and last FPDU is a
 * Terminate, and it goes out on the stream the two frames negotiated, CRC and markers included
 * (RFC 6581 §9.2: 2/0/0x07 when no RTR type is flagged by both sides). The expectations come from
 * the Request and Reply octets on the wire, not from the model's connection result.
 */

/** Both sides ask for CRC and markers; the initiator can only send a Read RTR, the responder takes only Write. */
const NO_MATCHING_RTR = {
  name: 'no matching RTR with CRC and markers',
  connection: {
    revision: 2,
    rtr: 'read',
    initiator: { markers: true, crc: true },
    responder: { markers: true, crc: true, acceptRtr: ['write'] },
  },
} as const;

/** A marker at the start of an FPDU: Reserved 0, FPDUPTR 0 (spec/mpa.md §4.1, §4.4). */
const MARKER_AT_FPDU_START = [0, 0, 0, 0];

/** Frames 1–3 of a capture are the TCP handshake; segment i is frame FIRST_SEGMENT_FRAME + i. */
const FIRST_SEGMENT_FRAME = 4;

/** The framing of the initiator → responder stream as a peer reads it off the two frames (spec/mpa.md §3.4, §4.2, §4.3). */
function initiatorStreamFromWire(segments: readonly TcpSegmentRecord[]): MpaStreamConfig {
  const request = segments.find((s) => s.kind === 'mpa-request')!;
  const reply = segments.find((s) => s.kind === 'mpa-reply')!;
  expect(parseMpaFrame(request.payload, 'request').status).toBe('ok');
  expect(parseMpaFrame(reply.payload, 'reply').status).toBe('ok');
  const flags = { request: request.payload[16]!, reply: reply.payload[16]! };
  return {
    s0: seqAdd(request.seq, request.payload.length),
    // The receiver of this direction is the responder: its Reply.M asks for markers.
    markers: (flags.reply & MpaFlag.M) !== 0,
    crc: ((flags.request | flags.reply) & MpaFlag.C) !== 0,
  };
}

function run(): ScenarioResult {
  return runScenario(parseScenario(NO_MATCHING_RTR));
}

describe('Terminate after a failed MPA negotiation (RFC 6581 §9.2, spec/mpa.md §8.4)', () => {
  test('the 2/0/0x07 Terminate is framed with the negotiated CRC and markers and deframes cleanly', () => {
    const r = run();
    expect(r.link.connection.status).toBe('failed');
    const fpdus = r.segments.filter((s) => s.kind === 'fpdu');
    expect(fpdus.map((s) => [s.from, s.opcode])).toEqual([['initiator', Opcode.TERMINATE]]);

    const stream = initiatorStreamFromWire(r.segments);
    expect(stream).toMatchObject({ markers: true, crc: true });
    const term = fpdus[0]!;
    // The Terminate is the first octet of full operation, so it opens with the marker at S0.
    expect(term.seq).toBe(stream.s0);
    expect(Array.from(term.payload.subarray(0, MARKER_SIZE))).toEqual(MARKER_AT_FPDU_START);

    // The model's own receive side, configured from the wire frames, checks CRC and every marker.
    const events = new MpaDeframer(stream).push(term.payload);
    expect(events.map((e) => e.kind)).toEqual(['fpdu']);
    const ulpdu = events[0]!.kind === 'fpdu' ? events[0]!.ulpdu : new Uint8Array(0);
    const fields = decodeTerminate(ulpdu.subarray(UNTAGGED_HEADER_SIZE));
    expect(fields).toMatchObject({ layer: LAYER_LLP, etype: ETYPE_MPA, code: MpaErrorCode.NO_MATCHING_RTR });
  });

  test('rnic pcap of the scenario: tshark decodes the Terminate with a good CRC and the marker at S0', () => {
    const r = run();
    const dir = mkdtempSync(join(tmpdir(), 'rnic-setup-failure-'));
    let pcap: Uint8Array;
    try {
      const file = join(dir, 'capture.pcap');
      writePcap(r, file);
      pcap = new Uint8Array(readFileSync(file));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const termIndex = r.segments.findIndex((s) => s.kind === 'fpdu');
    const frame = FIRST_SEGMENT_FRAME + termIndex;
    const verdicts = tsharkCrcVerdicts(pcap);
    expect(verdicts.map((v) => [v.frame, v.good]), verdicts.map((v) => v.showname).join('; ')).toEqual([[frame, true]]);
    const row = tsharkFields(pcap, ['frame.number', 'iwarp_mpa.marker_fpduptr', 'iwarp_rdma.opcode', 'iwarp_rdma.term_layer', 'iwarp_rdma.term_etype_llp', 'iwarp_rdma.term_errcode_llp'])[frame - 1]!;
    expect(row['frame.number']).toBe(String(frame));
    // One marker, at S0, pointing at the ULPDU_Length right after it; an FPDU this short reaches no second one.
    expect(r.segments[termIndex]!.payload.length).toBeLessThan(MARKER_PERIOD);
    expect(row['iwarp_mpa.marker_fpduptr']).toBe('0');
    expect(BigInt(row['iwarp_rdma.opcode']!)).toBe(BigInt(Opcode.TERMINATE));
    expect(BigInt(row['iwarp_rdma.term_layer']!)).toBe(BigInt(LAYER_LLP));
    expect(BigInt(row['iwarp_rdma.term_etype_llp']!)).toBe(BigInt(ETYPE_MPA));
    expect(BigInt(row['iwarp_rdma.term_errcode_llp']!)).toBe(BigInt(MpaErrorCode.NO_MATCHING_RTR));
  });
});
