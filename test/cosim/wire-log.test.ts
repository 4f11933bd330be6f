import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { qpStartup, qpStreams, type QpConfig } from '../../sim/cosim/qp-config';
import { FIRST_DIFFERENCE, WireLog, captureTimeNs } from '../../sim/cosim/wire-log';
import { encodeDdpSegment } from '../../ts-model/ddp/header';
import { IRD_ORD_NO_NEGOTIATE, MpaFramer } from '../../ts-model/mpa';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { checkFpdus, readFailureCapture } from '../support/failure-capture';

/**
 * The failure captures of one co-simulated connection (sim/cosim/wire-log.ts), built here from a
 * known exchange without the RTL: tshark must decode them as iWARP whatever the streams' offsets
 * from S0 (the co-simulation starts them anywhere), with simulation-time stamps and one comment on
 * the first differing packet.
 */

const DIR = mkdtempSync(join(tmpdir(), 'rnic-wire-log-'));
afterAll(() => rmSync(DIR, { recursive: true, force: true }));

const CONFIGURED_AT = 100;
const FPDUS = 6;

function config(markers: boolean, rxWords: number, txWords: number): QpConfig {
  // S0 of the peer's direction just below 2^32: the capture's sequence numbers wrap.
  const rxS0 = 0xffff_f000;
  const txS0 = 0x10;
  return {
    pd: 1, ird: 4, ord: IRD_ORD_NO_NEGOTIATE, msn: 1, mulpdu: 1460, maxUlpdu: 0xffff, bigEndian: false, rfc7306: true, crc: true,
    rx: { s0: rxS0, seq: (rxS0 + 4 * rxWords) >>> 0, markers },
    tx: { s0: txS0, seq: (txS0 + 4 * txWords) >>> 0, markers },
  };
}

const write = (i: number) => encodeDdpSegment({ tagged: true, last: true, dv: 1, rsvdUlp: rdmapControl(Opcode.WRITE), stag: 0x100 + i, to: BigInt(i * 1000) }, new Uint8Array(700 + i * 300).fill(i));
const send = (i: number, opcode: number = Opcode.SEND) => encodeDdpSegment({ tagged: false, last: true, dv: 1, rsvdUlp: rdmapControl(opcode), rsvdUlp2: 0, qn: 0, msn: i + 1, mo: 0 }, new Uint8Array(100 + i * 400).fill(0x40 + i));

/**
 * The peer sends an RDMA Write, then the RTL a Send, FPDUS times; the RTL's Send `differ` is a
 * Send with SE instead, and it sends only `rtlCount` of them. Returns the two captures and the cycles.
 */
function run(name: string, cfg: QpConfig, opts: { differ?: number; rtlCount?: number; first?: { cycle: number; what: string } } = {}) {
  const { rx, tx } = qpStreams(cfg);
  const log = new WireLog({ startup: qpStartup(cfg), rx, tx, cycle: CONFIGURED_AT });
  const [peer, rtl] = [new MpaFramer(rx), new MpaFramer(tx)];
  const modelSent: Uint8Array[] = [];
  const cycles: number[] = [];
  let cycle = 200;
  for (let i = 0; i < FPDUS; i++) {
    // Logged before the port takes it, stamped when it has (as the co-simulation does).
    const taken = log.in(peer.frame(write(i)).wire);
    taken((cycle += 150));
    cycles.push(cycle);
    modelSent.push(send(i));
    if (i >= (opts.rtlCount ?? FPDUS)) continue;
    log.out(rtl.frame(i === opts.differ ? send(i, Opcode.SEND_SE) : send(i)).wire, (cycle += 37));
    cycles.push(cycle);
  }
  const files = log.write(join(DIR, name), 'qp7', modelSent, opts.first);
  expect(files.map((f) => f.slice(f.lastIndexOf('/') + 1))).toEqual(['qp7-rtl.pcapng', 'qp7-model.pcapng']);
  return { rtl: readFailureCapture(readFileSync(files[0]!)), model: readFailureCapture(readFileSync(files[1]!)), cycles };
}

describe('failure captures of a connection, read by tshark', () => {
  // Stream offsets from S0 in words: at S0; 4 and 8 octets past a marker position (no FPDU fits
  // there: the filler reaches back a period); 12 and 24; anywhere; a period and 4 octets past.
  test.each([
    [true, 0, 0],
    [true, 1, 2],
    [true, 3, 6],
    [true, 250, 77],
    [true, 129, 385],
    [false, 250, 77],
  ])('markers %s, streams %i and %i words after S0: MPA Request and Reply first, every FPDU decodes, stamped with its cycle', (markers, rxWords, txWords) => {
    const { rtl, model, cycles } = run(`m${markers}-${rxWords}-${txWords}`, config(markers, rxWords, txWords), { differ: 3 });
    for (const c of [rtl, model]) {
      expect(c.dirs.initiator.markers).toBe(markers);
      expect(c.dirs.responder.markers).toBe(markers);
      expect(c.crc).toBe(true);
      // The set-up (handshake, Request, Reply, fillers) at the cycle the QP was configured.
      expect(c.frames[0]!.ns).toBe(captureTimeNs(CONFIGURED_AT));
      const { fpdus, checked, exempt } = checkFpdus(c);
      expect(fpdus.map((f) => f.ns)).toEqual(cycles.map(captureTimeNs));
      expect(checked + exempt).toBe(2 * FPDUS);
      expect(exempt).toBeLessThanOrEqual(2);
      // One comment: on the RTL's fourth FPDU (the first that differs) in both captures.
      const marked = c.frames.filter((f) => f.comment !== '');
      expect(marked).toHaveLength(1);
      expect(marked[0]).toBe(fpdus.filter((f) => f.from === 'responder')[3]);
      expect(marked[0]!.comment).toMatch(new RegExp(`^${FIRST_DIFFERENCE}: FPDU 3 .*the RTL sent opcode Send with SE \\(0x5\\).*, the model opcode Send \\(0x3\\)`));
    }
    // The RTL's capture holds its Send with SE, the model's the Send.
    const opcodes = (c: typeof rtl) => checkFpdus(c).fpdus.filter((f) => f.from === 'responder').map((f) => f.row['iwarp_rdma.opcode']);
    expect(opcodes(rtl)).toEqual(['0x03', '0x03', '0x03', '0x05', '0x03', '0x03']);
    expect(opcodes(model)).toEqual(Array(FPDUS).fill('0x03'));
  });

  test('an RTL that stops early: the model capture marks the FPDU it never sent, the RTL capture its last packet', () => {
    const { rtl, model } = run('early', config(true, 250, 77), { rtlCount: 4, first: { cycle: 5000, what: 'response ULPDU count' } });
    const marked = (c: typeof rtl) => c.frames.filter((f) => f.comment !== '');
    expect(marked(model)).toHaveLength(1);
    expect(marked(model)[0]).toBe(checkFpdus(model).fpdus.filter((f) => f.from === 'responder')[4]);
    expect(marked(model)[0]!.comment).toMatch(new RegExp(`^${FIRST_DIFFERENCE}: FPDU 4 the QP sends: the RTL sent none; the model sends opcode Send`));
    // Stamped when the run found them missing.
    expect(marked(model)[0]!.ns).toBe(captureTimeNs(5000));
    expect(marked(rtl)).toHaveLength(1);
    expect(marked(rtl)[0]).toBe(rtl.frames.at(-1));
  });

  test('no FPDU differs: the mark is on the last packet before the first mismatch, which it names', () => {
    // 10 cycles after the peer's fourth FPDU went in (cycle 911), before the RTL answered it.
    const at = 921;
    const { rtl, cycles } = run('same', config(true, 250, 77), { first: { cycle: at, what: 'memory at 0x1000' } });
    const marked = rtl.frames.filter((f) => f.comment !== '');
    expect(marked).toHaveLength(1);
    expect(cycles[6]).toBe(911);
    expect(marked[0]!.ns).toBe(captureTimeNs(911));
    expect(marked[0]!.comment).toBe(`no FPDU differs from the model's; the first mismatch, at cycle ${at}: memory at 0x1000`);
  });
});
