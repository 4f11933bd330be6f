import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { TARGET_CLOCK_MHZ, parseConfig } from '../../hdl-gen/gen/config';
import { cosimRnic } from '../../sim/cosim/rnic';
import { CAPTURE_EPOCH_NS, FIRST_DIFFERENCE, captureTimeNs } from '../../sim/cosim/wire-log';
import { checkFpdus, readFailureCapture, type FailureCapture } from '../support/failure-capture';

/**
 * The failure captures `rnic cosim` writes for the real top (sim/cosim/wire-log.ts), read by
 * tshark: a ddp_tx that sends the Read Request's RDMAP control octet as 0x43 (a Send) instead of
 * 0x41 makes the run fail, and the two pcapng files of its QP must decode as iWARP, carry
 * simulation time and mark the first differing packet.
 */

/** The Read Request's RDMAP control octet (version 1, opcode 1) in ddp_tx's constant header; the concatenation may break over lines. */
const READ_REQUEST_CONTROL = /8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h41,(\s*)8'h41(\s*)\};/;
const ONE_QP = parseConfig({ width: 8, qps: 1 });
/** The requester of the 1-QP top (its queue RAMs are sized for 2). */
const REQUESTER = 'ddp_tx_w8_q2';
const NS_PER_CYCLE = BigInt(1000 / TARGET_CLOCK_MHZ);

const sent = (c: FailureCapture) => c.frames.slice(c.setup).filter((f) => f.from === 'responder' && f.payload.length > 0);

describe('rnic cosim failure captures', () => {
  test('a Read Request sent as a Send: both captures start with the MPA Request and Reply, decode as iWARP in tshark, carry simulation time and mark the first differing packet', () => {
    const out = mkdtempSync(join(tmpdir(), 'rnic-failure-pcap-'));
    try {
      const r = cosimRnic({
        width: 8,
        seed: 3,
        ops: 400,
        // No peer faults: every FPDU on the wire is one Wireshark must decode with a good CRC.
        faults: 0,
        // Markers both ways (Wireshark 4.0.17 assumes both once either side asks, spec/mpa.md §9).
        markers: true,
        crc: true,
        config: ONE_QP,
        mutateModule: REQUESTER,
        mutate: (v) => {
          if (!READ_REQUEST_CONTROL.test(v)) throw new Error(`${REQUESTER}: the Read Request's control octet is not where this test looks for it`);
          return v.replace(READ_REQUEST_CONTROL, "8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h43,$18'h41$2};");
        },
        evidenceDir: out,
      });
      expect(r.mismatches).toBeGreaterThan(0);
      const m = r.firstMismatch!;
      expect(m.what).toMatch(/request ULPDU/);
      expect(r.evidence).toEqual([join(out, 'qp0-rtl.pcapng'), join(out, 'qp0-model.pcapng')]);
      const [rtl, model] = r.evidence.map((f) => readFailureCapture(readFileSync(f))) as [FailureCapture, FailureCapture];

      // The first FPDU the RTL sent that is not the model's.
      let k = 0;
      while (k < sent(rtl).length && Buffer.compare(sent(rtl)[k]!.payload, sent(model)[k]!.payload) === 0) k++;
      expect(k).toBeLessThan(sent(rtl).length);
      for (const c of [rtl, model]) {
        expect(c.dirs.initiator.markers && c.dirs.responder.markers && c.crc).toBe(true);
        // Frames 1–5 are the handshake and the MPA Request and Reply (readFailureCapture); every
        // FPDU after the set-up decodes: MPA length and markers, DDP and RDMAP fields.
        const { fpdus, checked, exempt } = checkFpdus(c);
        expect(checked + exempt).toBe(fpdus.length);
        expect(checked).toBeGreaterThan(10);
        expect(exempt).toBeLessThanOrEqual(Math.ceil(checked / 5));
        // Simulation time: whole cycles of the design's clock, in order, within the run.
        const times = c.frames.map((f) => f.ns);
        for (const [i, t] of times.entries()) {
          expect((t - CAPTURE_EPOCH_NS) % NS_PER_CYCLE, `frame ${i + 1}`).toBe(0n);
          if (i) expect(t >= times[i - 1]!, `frame ${i + 1} after frame ${i}`).toBe(true);
        }
        expect(times.at(-1)! <= captureTimeNs(r.cycles)).toBe(true);
        // Exactly one comment, on the first differing packet, at the cycle the RTL sent it.
        const marked = c.frames.filter((f) => f.comment !== '');
        expect(marked).toHaveLength(1);
        expect(marked[0]).toBe(sent(c)[k]);
        expect(marked[0]!.comment.startsWith(`${FIRST_DIFFERENCE}: FPDU ${k} `)).toBe(true);
        expect(marked[0]!.comment).toMatch(/the RTL sent opcode Send \(0x3\).*the model opcode RDMA Read Request \(0x1\)/);
        expect(marked[0]!.ns).toBe(CAPTURE_EPOCH_NS + BigInt(m.cycle) * NS_PER_CYCLE);
      }
      // What each side put in the differing packet, as Wireshark reads it.
      expect(sent(rtl)[k]!.row['iwarp_rdma.opcode']).toBe('0x03');
      expect(sent(model)[k]!.row['iwarp_rdma.opcode']).toBe('0x01');
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
