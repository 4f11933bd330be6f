import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { IRD_ORD_NO_NEGOTIATE } from '../../ts-model/mpa/constants';
import { Opcode } from '../../ts-model/rdmap/constants';
import { AOpCode } from '../../ts-model/rdmap/atomics';
import { prng } from '../../ts-model/util/prng';
import { parseConfig } from '../../hdl-gen/gen/config';
import type { QpConfig } from '../../sim/cosim/qp-config';
import { immediate, plainQp } from '../support/top-fixtures';
import { RnicBench, openTop } from '../../sim/cosim/rnic-bench';
import type { LocalWr } from '../../sim/cosim/rx-peer';
import type { SimModel } from '../../sim/verilator/model';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { MpaFramer } from '../../ts-model/mpa';
import { rdmapControl } from '../../ts-model/rdmap/constants';

/**
 * ORD on the transmit side (spec/ddp-rdmap.md §7, RFC 5040 §6.1): the requester never has more
 * than ORD Read and Atomic Requests outstanding; one past it waits, and the work requests behind
 * it with it (the send queue is in order). No responses come back here, so what leaves is exactly
 * what ORD (and the ORQ's depth, 4 in this configuration) let through.
 */
const W = 8;
/** A configured ORQ depth below the default (8): the configuration reaches the RTL. */
const ORQ_DEPTH = 4;
const TOP = parseConfig({ width: W, qps: 2, orqDepth: ORQ_DEPTH });
const QP = 1;

const read = (id: number): LocalWr => ({ wr: { kind: 'read', id, stag: 0x100 + id, to: BigInt(id) << 12n, length: 4096, localStag: 0x200, localTo: 0n }, addr: 0n, requestId: 0 });
const atomic = (id: number): LocalWr => ({
  wr: { kind: 'atomic', id, localStag: null, localTo: 0n, aopcode: AOpCode.FETCH_ADD, stag: 0x300, to: 8n * BigInt(id), addSwapData: 1n, addSwapMask: 0n, compareData: 0n, compareMask: 0n },
  addr: 0n,
  requestId: id,
});

const config = (ord: number): QpConfig => plainQp({ ord });

describe('rnic_top_w8: a configured ORD bounds the Read and Atomic Requests outstanding', () => {
  let model: SimModel;
  beforeAll(() => {
    model = openTop(W, { config: TOP });
  });
  afterAll(() => model?.close());

  /** Configures QP 1 with `ord`, posts `wrs`, and returns the opcodes of the FPDUs that left. */
  function send(ord: number, wrs: LocalWr[]): { opcodes: number[]; waiting: boolean } {
    const bench = new RnicBench(model, { r: prng(ord), backpressure: 0, noise: true });
    bench.reset();
    bench.cfg.push({ qp: QP, c: config(ord) });
    bench.settle('configuring the QP');
    for (const w of wrs) bench.post(QP, w);
    bench.run(2000);
    // Markers off, CRC on: an FPDU is ULPDU_Length (2 octets), the ULPDU, pad and CRC; the RDMAP
    // opcode is in the ULPDU's second octet.
    const opcodes = bench.mAxis.drain().map((f) => {
      expect(f.tid).toBe(QP);
      return f.data[3]! & 0xf;
    });
    return { opcodes, waiting: !bench.wr.idle };
  }

  test.each([
    [0, 0],
    [1, 1],
    [3, 3],
    [8, ORQ_DEPTH],
    [IRD_ORD_NO_NEGOTIATE, ORQ_DEPTH],
  ])('ORD %i: of 10 Read Requests, %i leave; the rest wait', (ord, leave) => {
    const { opcodes, waiting } = send(ord, Array.from({ length: 10 }, (_, i) => read(i)));
    expect(opcodes).toEqual(Array(leave).fill(Opcode.READ_REQUEST));
    expect(waiting).toBe(true);
  });

  test('a Read answered in full makes room for one more: ORD 2, four Reads; after the first one\u2019s response the third leaves, the fourth waits', () => {
    const bench = new RnicBench(model, { r: prng(2), backpressure: 0, noise: true });
    const c = config(2);
    // The sink of every Read: STag 0x200 (read(i).wr.localStag), local write, at TO 0.
    bench.start([{ qp: QP, c }], [{ stag: 0x200, pd: c.pd, base: 0x4000_0000n, length: 8192n, access: ['local-write'], va: false, invalidatable: false }]);
    for (let i = 0; i < 4; i++) bench.post(QP, read(i));
    bench.run(2000);
    const opcodes = () => bench.mAxis.drain().map((f) => f.data[3]! & 0xf);
    expect(opcodes()).toEqual([Opcode.READ_REQUEST, Opcode.READ_REQUEST]);
    // The peer answers Read 0: 4096 octets to STag 0x200 at TO 0, in segments of 1460.
    const framer = new MpaFramer({ s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc });
    const payload = new Uint8Array(4096).map((_, i) => i & 0xff);
    for (const seg of segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.READ_RESPONSE), stag: 0x200, to: 0n, payload }, 1460)) bench.sAxis.send(framer.frame(seg).wire, { tid: QP });
    bench.run(3000);
    expect(bench.cq.map((e) => e.text)).toContainEqual(expect.stringMatching(/read/i));
    expect(opcodes()).toEqual([Opcode.READ_REQUEST]);
    expect(bench.wr.idle).toBe(false);
  });

  test('Atomics count against ORD with Reads, and a work request behind a waiting one waits too', () => {
    const { opcodes, waiting } = send(3, [read(0), atomic(1), immediate(2), atomic(3), read(4), immediate(5)]);
    expect(opcodes).toEqual([Opcode.READ_REQUEST, Opcode.ATOMIC_REQUEST, Opcode.IMMEDIATE, Opcode.ATOMIC_REQUEST]);
    expect(waiting).toBe(true);
  });
});
