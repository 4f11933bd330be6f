import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MpaFramer } from '../../ts-model/mpa';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { prng } from '../../ts-model/util/prng';
import type { QpConfig } from '../../sim/cosim/qp-config';
import { immediate, plainQp } from '../support/top-fixtures';
import { RnicBench, openTop } from '../../sim/cosim/rnic-bench';
import type { RtlRegion } from '../../sim/cosim/rx-peer';
import type { SimModel } from '../../sim/verilator/model';

/**
 * MPA fencing in hardware (RFC 6581 §3, spec/mpa.md §7.4): a QP configured with cfg_fence (the
 * responder) sends no FPDU, work request or Terminate, until the peer's first FPDU has arrived,
 * good or failed; then one `first FPDU` completion (kind 8) tells the host, and what waited goes.
 * A QP without it sends at once. The random top run (sim/cosim/rnic.ts) fences a quarter of its
 * connections and checks the same rules against the model; this pins the cycle it opens.
 */
const W = 8;
const FENCED = 1;
const OPEN = 2;
const STAG = 0x300;

const config = (fence: boolean): QpConfig => plainQp({ pd: 7, fence });
const region: RtlRegion = { stag: STAG, pd: 7, base: 0x5000_0000n, length: 4096n, access: ['remote-write'], va: false, invalidatable: false };

/** The peer's RDMA Write of `n` octets to the region, as one FPDU (CRC broken if `badCrc`). */
function peerWrite(n: number, badCrc = false): Uint8Array {
  const c = config(true);
  const framer = new MpaFramer({ s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc });
  const [seg] = segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: STAG, to: 0n, payload: new Uint8Array(n).fill(0x5a) }, c.mulpdu);
  const wire = framer.frame(seg!).wire.slice();
  if (badCrc) wire[wire.length - 1]! ^= 1;
  return wire;
}

describe('rnic_top_w8: MPA fencing (cfg_fence) holds a QP\u2019s transmit until the peer\u2019s first FPDU', () => {
  let model: SimModel;
  beforeAll(() => {
    model = openTop(W);
  });
  afterAll(() => model?.close());

  /** QP FENCED with cfg_fence and QP OPEN without, both in PD 7 with the Write region (the RNIC's one STag table); two Immediate Data posted on each. */
  function start(seed: number): RnicBench {
    const bench = new RnicBench(model, { r: prng(seed), backpressure: 0, noise: true });
    bench.start(
      [{ qp: FENCED, c: config(true) }, { qp: OPEN, c: config(false) }],
      [region],
    );
    for (const qp of [FENCED, OPEN]) for (let i = 0; i < 2; i++) bench.post(qp, immediate(i));
    bench.settle('the work requests');
    return bench;
  }
  const fenced = (b: RnicBench) => Number(b.qpStatus(FENCED).fenced);
  const opcodes = (b: RnicBench, qp: number) => b.mAxis.drain().filter((f) => f.tid === qp).map((f) => f.data[3]! & 0xf);

  test('before the first FPDU: the fenced QP sends nothing and reports nothing; the other sends at once', () => {
    const bench = start(1);
    bench.run(2000);
    const frames = bench.mAxis.drain();
    expect(frames.map((f) => f.tid)).toEqual([OPEN, OPEN]);
    expect(fenced(bench)).toBe(1);
    expect(bench.cq.map((e) => [e.qp, e.text])).toEqual([[OPEN, 'sent'], [OPEN, 'sent']]);
  });

  test('the first FPDU opens it on its last octet, not before: one first-FPDU completion, then what waited leaves', () => {
    const bench = start(2);
    bench.mAxis.drain();
    bench.cq.splice(0);
    bench.sAxis.send(peerWrite(200), { tid: FENCED });
    // Until the FPDU's last beat is taken (and mpa_rx has judged it) m_axis offers nothing.
    const tvalid = () => bench.peekStatus(['m_axis_tvalid']).m_axis_tvalid!;
    let cycles = 0;
    while (bench.sAxis.sentCount === 0) {
      expect(tvalid(), `m_axis_tvalid at cycle ${cycles} of the first FPDU`).toBe(0);
      bench.run(1);
      if (++cycles > 500) throw new Error('the first FPDU was not taken in 500 cycles');
    }
    expect(cycles).toBeGreaterThan(200 / W);
    bench.settle('the first FPDU');
    expect(fenced(bench)).toBe(0);
    expect(opcodes(bench, FENCED)).toEqual([Opcode.IMMEDIATE, Opcode.IMMEDIATE]);
    expect(bench.cq.filter((e) => e.qp === FENCED).map((e) => e.text)).toEqual(['first FPDU', 'sent', 'sent']);
    expect(bench.mem.memory.read(region.base, 200)).toEqual(new Uint8Array(200).fill(0x5a));
  });

  test('a first FPDU that fails MPA\u2019s CRC has still arrived: the fence opens and the Terminate leaves first', () => {
    const bench = start(3);
    bench.mAxis.drain();
    bench.cq.splice(0);
    bench.sAxis.send(peerWrite(64, true), { tid: FENCED });
    bench.settle('a failed first FPDU');
    expect(fenced(bench)).toBe(0);
    // The Terminate stops the QP: the work requests not yet begun are dropped (RFC 5040 §7.1).
    expect(opcodes(bench, FENCED)).toEqual([Opcode.TERMINATE]);
    // Within a QP the queue gives events before the first-FPDU entry (the dropped work requests
    // still count as sent: they left ddp_tx).
    expect(bench.cq.filter((e) => e.qp === FENCED && !e.sent).map((e) => e.text)).toEqual(['terminate-sent 0x2/0x0/0x02', 'first FPDU']);
  });

  test('a new connection on the QP fences again', () => {
    const bench = start(4);
    bench.sAxis.send(peerWrite(8), { tid: FENCED });
    bench.settle('the first FPDU');
    expect(fenced(bench)).toBe(0);
    bench.cfg.push({ qp: FENCED, c: config(true) });
    bench.settle('a new connection');
    expect(fenced(bench)).toBe(1);
  });

  test('a new connection on a held QP drops what it held: nothing of it starts while the context loads', () => {
    const bench = start(5);
    bench.mAxis.drain();
    bench.cq.splice(0);
    // Unfenced now: the held Immediates must not slip out in the cycle the context changes.
    bench.cfg.push({ qp: FENCED, c: config(false) });
    bench.settle('a new connection');
    expect(bench.mAxis.drain()).toEqual([]);
    for (const qp of [FENCED, OPEN]) bench.post(qp, immediate(9));
    bench.settle('one more Immediate on each QP');
    const frames = bench.mAxis.drain();
    expect(frames.map((f) => f.tid).sort()).toEqual([FENCED, OPEN]);
    // The new connection's first message: MSN 1 (the DDP untagged header's MSN, RFC 5041 section 4.3).
    const fpdu = frames.find((f) => f.tid === FENCED)!.data;
    expect(new DataView(fpdu.buffer, fpdu.byteOffset).getUint32(2 + 10)).toBe(1);
  });
});
