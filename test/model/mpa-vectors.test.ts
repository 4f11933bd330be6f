import { describe, expect, test } from 'vitest';
import {
  MpaDeframer,
  MpaFramer,
  decodeFpdu,
  encodeFpdu,
  mpaOptions,
  padLength,
  setUpConnection,
  type DeframeEvent,
} from '../../ts-model/mpa';
import { hex, unhex } from '../support/random';
import { loadVectors, num } from '../support/vectors';

interface FpduVector {
  name: string;
  mpa: { markers: boolean; crc: boolean };
  ulpdu_hex: string;
  ulpdu_length: number;
  pad_length: number;
  crc: string;
  wire_hex: string;
  wire_length: number;
}
const fpdus = loadVectors<{ vectors: FpduVector[] }>('fpdu.json').vectors;
const markerFile = loadVectors<any>('markers.json');
const [requestV, replyV, fpdu1V, fpdu2V] = markerFile.vectors;

const delivered = (events: DeframeEvent[]) => events.filter((e) => e.kind === 'fpdu').map((e) => hex((e as any).ulpdu));

describe.each(fpdus)('fpdu.json: $name', (v) => {
  const ulpdu = unhex(v.ulpdu_hex);

  test('encodes byte for byte (length, pad, CRC least-significant octet first)', () => {
    expect(ulpdu.length).toBe(v.ulpdu_length);
    expect(padLength(ulpdu.length)).toBe(v.pad_length);
    const wire = encodeFpdu(ulpdu, v.mpa.crc);
    expect(hex(wire)).toBe(v.wire_hex);
    expect(wire.length).toBe(v.wire_length);
  });

  test('the framer without markers gives the same octets from any 4-aligned position', () => {
    for (const s0 of [0, 0x12345678, 0xfffffffc]) {
      const f = new MpaFramer({ s0, markers: false, crc: true, seq: (s0 + 40) >>> 0 });
      const out = f.frame(ulpdu);
      expect(hex(out.wire)).toBe(v.wire_hex);
      expect(out.crc).toBe(num(v.crc));
    }
  });

  test('decodes back to the ULPDU with a good CRC', () => {
    const d = decodeFpdu(unhex(v.wire_hex), true)!;
    expect(hex(d.ulpdu)).toBe(v.ulpdu_hex);
    expect(d.crcOk).toBe(true);
    const r = new MpaDeframer({ s0: 0, markers: false, crc: true });
    expect(delivered(r.push(unhex(v.wire_hex)))).toEqual([v.ulpdu_hex]);
  });

  test('with CRC off the CRC field is sent as zero and never checked', () => {
    const wire = encodeFpdu(ulpdu, false);
    expect(hex(wire.subarray(wire.length - 4))).toBe('00000000');
    expect(hex(wire.subarray(0, wire.length - 4))).toBe(v.wire_hex.slice(0, -8));
    const r = new MpaDeframer({ s0: 0, markers: false, crc: false });
    expect(delivered(r.push(wire))).toEqual([v.ulpdu_hex]);
  });
});

describe('markers.json: the worked example', () => {
  const conn = setUpConnection({
    initiatorIsn: num(markerFile.connection.initiator_isn),
    responderIsn: num(markerFile.connection.responder_isn),
    initiator: { markers: true, crc: true, ird: 16, ord: 16, rtr: ['write', 'read'] },
    responder: { markers: true, crc: true, ird: 16, ord: 8, rtr: ['write'] },
  });

  test('enhanced Request and Reply are reproduced byte for byte', () => {
    expect(conn.status).toBe('established');
    expect(hex(conn.request.octets)).toBe(requestV.hex);
    expect(conn.request.seq).toBe(num(requestV.seq));
    expect(hex(conn.reply!.octets)).toBe(replyV.hex);
    expect(conn.reply!.seq).toBe(num(replyV.seq));
  });

  test('S0, markers and CRC per direction and the RTR type follow from the frames', () => {
    expect(conn.initiatorToResponder.s0).toBe(num(markerFile.connection.s0_initiator_to_responder));
    expect(conn.responderToInitiator.s0).toBe(num(markerFile.connection.s0_responder_to_initiator));
    expect(conn.initiatorToResponder.markers).toBe(true);
    expect(conn.responderToInitiator.markers).toBe(true);
    expect(conn.crc).toBe(true);
    expect(conn.rtr).toBe('write');
  });

  const framer = () => new MpaFramer(conn.initiatorToResponder);

  test('FPDU 1 (RTR) starts with a leading marker covered by its CRC', () => {
    const f = framer().frame(unhex(fpdu1V.ulpdu_hex));
    expect(hex(f.wire)).toBe(fpdu1V.wire_hex);
    expect(f.startSeq).toBe(num(fpdu1V.start_seq));
    expect(f.ulpduLengthSeq).toBe(num(fpdu1V.ulpdu_length_seq));
    expect(f.crc).toBe(num(fpdu1V.crc));
    expect(f.markers.map((m) => ({ seq: m.seq, fpduptr: m.fpduptr, at: m.wireOffset }))).toEqual(
      fpdu1V.markers.map((m: any) => ({ seq: num(m.seq), fpduptr: m.fpduptr, at: m.wire_offset_in_fpdu })),
    );
  });

  test('FPDU 1 with leadMarkerInCrc = false has the alternative CRC', () => {
    const options = mpaOptions({ leadMarkerInCrc: false });
    const f = new MpaFramer({ ...conn.initiatorToResponder, options }).frame(unhex(fpdu1V.ulpdu_hex));
    expect(f.crc).toBe(num(fpdu1V.alternative_leadMarkerInCrc_false.crc));
    expect(hex(f.wire.subarray(f.crcOffset))).toBe(fpdu1V.alternative_leadMarkerInCrc_false.crc_wire_hex);
    const r = new MpaDeframer({ ...conn.initiatorToResponder, options });
    expect(delivered(r.push(f.wire))).toEqual([fpdu1V.ulpdu_hex]);
  });

  test('FPDU 2 (1000-octet Send) carries two markers with FPDUPTR 488 and 1000', () => {
    const tx = framer();
    tx.frame(unhex(fpdu1V.ulpdu_hex));
    const f = tx.frame(unhex(fpdu2V.ulpdu_hex));
    expect(hex(f.wire)).toBe(fpdu2V.wire_hex);
    expect(f.wire.length).toBe(fpdu2V.wire_length);
    expect(f.crc).toBe(num(fpdu2V.crc));
    expect(f.startSeq).toBe(num(fpdu2V.start_seq));
    expect(f.markers.map((m) => [m.seq, m.fpduptr, m.wireOffset])).toEqual(
      fpdu2V.markers.map((m: any) => [num(m.seq), m.fpduptr, m.wire_offset_in_fpdu]),
    );
    expect(tx.seq).toBe(num(markerFile.connection.next_seq_after_fpdu2));
  });

  test('the receiver recovers both ULPDUs from the stream fed one octet at a time', () => {
    const stream = unhex(fpdu1V.wire_hex + fpdu2V.wire_hex);
    const r = new MpaDeframer(conn.initiatorToResponder);
    const events: DeframeEvent[] = [];
    for (let i = 0; i < stream.length; i++) events.push(...r.push(stream.subarray(i, i + 1)));
    expect(delivered(events)).toEqual([fpdu1V.ulpdu_hex, fpdu2V.ulpdu_hex]);
    expect(r.seq).toBe(num(markerFile.connection.next_seq_after_fpdu2));
  });
});
