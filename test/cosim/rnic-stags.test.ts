import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { stagTableInitCycles } from '../../hdl-gen/blocks/stag-table';
import { MpaFramer } from '../../ts-model/mpa';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { prng } from '../../ts-model/util/prng';
import { plainQp } from '../support/top-fixtures';
import { RnicBench, openTop } from '../../sim/cosim/rnic-bench';
import type { RtlRegion } from '../../sim/cosim/rx-peer';
import type { SimModel } from '../../sim/verilator/model';

/**
 * One STag table for the RNIC (rnic_top, as the model's ts-model/rnic/rnic.ts): an STag belongs
 * to a protection domain, not to a QP. Every QP of the region's PD reaches it; a QP of another PD
 * fails the stream check T2 (spec/ddp-rdmap.md §5.3: DDP tagged buffer, 0x1/0x1/0x02, "STag not
 * associated with DDP stream") and writes nothing; a QP's new connection leaves the table as it
 * is; a deregistered entry is gone for every QP (T1, 0x1/0x1/0x00). The random top run
 * (sim/cosim/rnic.ts) gives each QP's peer STags of its own in the shared table and checks every
 * lookup against the model; this pins the sharing itself. And the table's start: after reset it
 * sweeps its block RAM clear, stag_cfg_ready 0 meanwhile, and takes the STags after.
 */
const W = 8;
const PD = 7;
const QPS = { a: 0, b: 1, other: 2 } as const;
const STAG = 0x300;
const region: RtlRegion = { stag: STAG, pd: PD, base: 0x5000_0000n, length: 4096n, access: ['remote-write'], va: false, invalidatable: false };
const config = (qp: number) => plainQp({ pd: qp === QPS.other ? PD + 2 : PD });

describe('rnic_top_w8: one STag table for every QP, the PD check per QP', () => {
  let model: SimModel;
  beforeAll(() => {
    model = openTop(W);
  });
  afterAll(() => model?.close());

  /** The three QPs configured, the region registered once; a framer per QP for the peer's Writes. */
  function start(seed: number) {
    const bench = new RnicBench(model, { r: prng(seed), backpressure: 0.2 });
    bench.start(Object.values(QPS).map((qp) => ({ qp, c: config(qp) })), [region]);
    const framers = new Map<number, MpaFramer>();
    const framerOf = (qp: number) => {
      const c = config(qp);
      if (!framers.has(qp)) framers.set(qp, new MpaFramer({ s0: c.rx.s0, seq: c.rx.seq, markers: c.rx.markers, crc: c.crc }));
      return framers.get(qp)!;
    };
    /** The peer of `qp` writes `n` octets of `fill` at TO `to` of STag `stag`: one FPDU. */
    const write = (qp: number, to: number, n: number, fill: number, stag = STAG) => {
      const [seg] = segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag, to: BigInt(to), payload: new Uint8Array(n).fill(fill) }, config(qp).mulpdu);
      bench.sAxis.send(framerOf(qp).frame(seg!).wire, { tid: qp });
    };
    const terminates = () => bench.cq.filter((e) => !e.sent).map((e) => `QP ${e.qp}: ${e.text}`);
    const memory = (to: number, n: number) => bench.mem.memory.read(region.base + BigInt(to), n);
    return { bench, write, terminates, memory, newConnection: (qp: number) => framers.delete(qp) };
  }

  test('after reset the table sweeps its entries: stag_cfg_ready is 0 for stagDepth cycles, then 1', () => {
    const bench = new RnicBench(model, { r: prng(4) });
    bench.reset();
    const ready = model.handle('stag_cfg_ready');
    const depth = 1 << model.handle('stag_cfg_index').width;
    expect(bench.until(() => model.peekNumber(ready) === 1, 2 * depth, 'stag_cfg_ready after reset')).toBe(stagTableInitCycles(depth));
  });

  test('QPs of the STag\u2019s PD all reach it, their segments interleaved (lookups take turns)', () => {
    const { bench, write, terminates, memory } = start(1);
    for (let k = 0; k < 8; k++) {
      write(QPS.a, 128 * k, 64, 0x10 + k);
      write(QPS.b, 128 * k + 64, 64, 0x20 + k);
    }
    bench.settle('Writes of two QPs to one region');
    expect(terminates()).toEqual([]);
    for (let k = 0; k < 8; k++) {
      expect(memory(128 * k, 64)).toEqual(new Uint8Array(64).fill(0x10 + k));
      expect(memory(128 * k + 64, 64)).toEqual(new Uint8Array(64).fill(0x20 + k));
    }
  });

  test('a QP of another PD fails T2 (0x1/0x1/0x02) and writes nothing; the others go on', () => {
    const { bench, write, terminates, memory } = start(2);
    write(QPS.other, 0, 64, 0x77);
    write(QPS.a, 64, 64, 0x11);
    bench.settle('a Write from another PD');
    expect(terminates()).toEqual([`QP ${QPS.other}: terminate-sent 0x1/0x1/0x02`]);
    expect(memory(0, 64)).toEqual(new Uint8Array(64));
    expect(memory(64, 64)).toEqual(new Uint8Array(64).fill(0x11));
  });

  test('a new connection on a QP leaves the table; a deregistered STag is invalid for every QP (0x1/0x1/0x00)', () => {
    const { bench, write, terminates, memory, newConnection } = start(3);
    bench.cfg.push({ qp: QPS.a, c: config(QPS.a) });
    newConnection(QPS.a);
    bench.settle('a new connection on QP a');
    write(QPS.a, 0, 32, 0x31);
    bench.settle('a Write on the new connection');
    expect(memory(0, 32)).toEqual(new Uint8Array(32).fill(0x31));
    bench.stagCfg.push({ ...region, enable: false });
    bench.settle('the STag deregistered');
    write(QPS.b, 32, 32, 0x32);
    bench.settle('a Write to the deregistered STag');
    expect(terminates()).toEqual([`QP ${QPS.b}: terminate-sent 0x1/0x1/0x00`]);
    expect(memory(32, 32)).toEqual(new Uint8Array(32));
  });
});
