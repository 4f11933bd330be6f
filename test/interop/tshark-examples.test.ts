import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { loadScenario } from '../../cli/scenario-cli';
import { DEFAULT_ISN, runScenario } from '../../ts-model/scenario/run';
import { connectionPcap } from '../../sim/pcap/scenario-pcap';
import { IWARP_FIELDS, checkDdpRdmap, fromWire, wiresharkMarkerGap } from '../support/tshark-iwarp';
import { tsharkCrcVerdicts, tsharkFields } from '../support/tshark';

/**
 * Wireshark interop: tshark reads the pcap of every example scenario, and every FPDU it decodes
 * must carry the fields the model put on the wire. Expectations come from the wire octets
 * themselves (markers found by sequence position, headers read at their RFC offsets), not from
 * the model's own bookkeeping.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const EXAMPLES = [
  ...readdirSync(`${ROOT}examples`).filter((f) => f.endsWith('.json')).map((f) => `examples/${f}`),
  ...readdirSync(`${ROOT}examples/faults`).filter((f) => f.endsWith('.json')).map((f) => `examples/faults/${f}`),
].sort();

describe.each(EXAMPLES)('tshark reads %s', (file) => {
  test('every FPDU decodes with the model’s fields and CRC verdict', () => {
    const scenario = loadScenario(`${ROOT}${file}`);
    const r = runScenario(scenario);
    const isn = { initiator: scenario.connection.initiator.isn ?? DEFAULT_ISN.initiator, responder: scenario.connection.responder.isn ?? DEFAULT_ISN.responder };
    const pcap = connectionPcap(isn, r.segments);
    const rows = tsharkFields(pcap, IWARP_FIELDS);
    const verdicts = new Map(tsharkCrcVerdicts(pcap).map((v) => [v.frame, v]));
    const conn = r.link.connection;
    let checked = 0;
    let gaps = 0;
    let lost = 0;
    r.segments.forEach((seg, i) => {
      // Frames 1–3 are the TCP handshake; segment i is frame 4 + i.
      const frame = 4 + i;
      const row = rows[frame - 1]!;
      expect(row['frame.number']).toBe(String(frame));
      if (seg.kind !== 'fpdu') return;
      if (seg.lost) {
        lost++;
        return;
      }
      const dir = seg.from === 'initiator' ? conn.initiatorToResponder : conn.responderToInitiator;
      const where = `${file} frame ${frame} (${seg.from}, seq 0x${seg.seq.toString(16)}${seg.fault ? `, fault ${seg.fault}` : ''})`;
      if (wiresharkMarkerGap(seg, dir)) {
        gaps++;
        return;
      }
      const w = fromWire(seg, dir);
      expect(row['iwarp_mpa.ulpdulength'], where).toBe(String(w.ulpdu.length));
      expect(row['iwarp_mpa.marker_fpduptr'], where).toBe(w.fpduptrs.join(','));
      const verdict = verdicts.get(frame);
      if (dir.crc) expect(verdict?.good, `${where}: ${verdict?.showname}`).toBe(seg.fault !== 'corrupt-crc');
      else expect(verdict, where).toBeUndefined();
      checked++;
      if (seg.fault || w.ulpdu.length < 14) return; // the DDP layer of a corrupted FPDU is not compared
      checkDdpRdmap(row, w.ulpdu, where);
    });
    expect(checked + gaps + lost).toBe(r.segments.filter((s) => s.kind === 'fpdu').length);
    if (conn.status === 'established') expect(checked).toBeGreaterThan(0);
    // The gap is rare: at most one FPDU in five meets it.
    expect(gaps).toBeLessThanOrEqual(Math.ceil(checked / 5));
  });
});
