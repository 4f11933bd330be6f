import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rnicRegisterMap } from '../../hdl-gen/blocks/rnic-regmap';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import type { ModuleSources } from '../../hdl-gen/gen/sources';
import { AXI_RESP, registerNamed } from '../../hdl-gen/lib/regmap';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { MpaDeframer, MpaFramer, setUpConnection, type ConnectionResult } from '../../ts-model/mpa';
import { MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { cosimRnic } from '../../sim/cosim/rnic';
import { RnicBench } from '../../sim/cosim/rnic-bench';
import type { RtlRegion } from '../../sim/cosim/rx-peer';
import { openDut } from '../../sim/harness/open-dut';
import { negotiatedQpConfig, qpConfigWrites } from '../../sim/host/axil-config';
import type { CompiledModel } from '../../sim/verilator/build';
import type { SimModel } from '../../sim/verilator/model';
import { immediate } from '../support/top-fixtures';
import { withSeed } from '../support/random';

/**
 * The integrator's top, rnic_top_axil_w8 (rnic_top_w8 behind rnic_cfg_axil; the default
 * configuration, 1024 QPs): QP contexts and STag entries go in through AXI4-Lite only, written by
 * the host helper (sim/host/axil-config.ts) on an AXI4-Lite master with random pauses, and real
 * traffic then runs through the top, checked against the model.
 */
const W = 8;
const PD = 7;
const STAG = 0x4200;
const region: RtlRegion = { stag: STAG, pd: PD, base: 0x7000_0000n, length: 8192n, access: ['remote-write'], va: false, invalidatable: false };

describe('rnic_top_axil_w8: configured over AXI4-Lite', () => {
  let opened: { src: ModuleSources; compiled: CompiledModel; model: SimModel };
  beforeAll(() => {
    opened = openDut(`rnic_top_axil_w${W}`);
  });
  afterAll(() => opened?.model.close());
  const bench = (seed: number, backpressure = 0.2) => withSeed(seed, (r) => new RnicBench(opened.model, { r, backpressure, noise: true }, opened));

  test('a connection the model\u2019s MPA set-up negotiated, loaded by the host helper: the peer\u2019s Write lands, what the RTL sends deframes with the negotiated framing, the registers read back', () => {
    withSeed(11, (r) => {
      // The peer initiates (markers in what it receives, CRC); the RTL is the responder, fenced until the peer's first FPDU.
      const conn: ConnectionResult = setUpConnection({
        initiator: { markers: true, crc: true, ird: 4, ord: 2, rtr: [] },
        responder: { markers: false, crc: false, ird: 8, ord: 8 },
        initiatorIsn: r.u32(),
        responderIsn: r.u32(),
      });
      expect(conn.status).toBe('established');
      const qp = r.int(0, DEFAULT_CONFIG.qps - 1);
      const cfg = negotiatedQpConfig(conn, 'responder', { pd: PD, msn: 1, mulpdu: 1460, maxUlpdu: MAX_ULPDU_LENGTH, bigEndian: false, rfc7306: true });
      expect(cfg).toMatchObject({ crc: true, ird: 8, ord: 4, fence: true, tx: { markers: true }, rx: { markers: false } });
      const b = bench(r.u32());
      b.start([{ qp, c: cfg }], [region]);
      expect(b.broken).toEqual([]);

      // The peer's Write, framed as the negotiated initiator-to-responder stream.
      const toRtl = new MpaFramer({ ...conn.initiatorToResponder, seq: conn.initiatorToResponder.s0 });
      const payload = Uint8Array.from({ length: 700 }, (_, i) => (i * 7 + 3) & 0xff);
      for (const seg of segmentMessage({ tagged: true, rsvdUlp: rdmapControl(Opcode.WRITE), stag: STAG, to: 96n, payload }, cfg.mulpdu)) {
        b.sAxis.send(toRtl.frame(seg).wire, { tid: qp });
      }
      b.settle('the peer\u2019s Write');
      expect(b.mem.memory.read(region.base + 96n, payload.length)).toEqual(payload);
      // The fence has opened: Immediate Data from the RTL, deframed as the responder-to-initiator stream.
      b.post(qp, immediate(5));
      b.settle('an Immediate Data');
      const frames = b.mAxis.drain().filter((f) => f.tid === qp);
      expect(frames).toHaveLength(1);
      const fromRtl = new MpaDeframer({ ...conn.responderToInitiator, seq: conn.responderToInitiator.s0 });
      const events = fromRtl.push(frames[0]!.data);
      expect(events.map((e) => e.kind)).toEqual(['fpdu']);
      const ulpdu = (events[0] as { ulpdu: Uint8Array }).ulpdu;
      expect(ulpdu[1]! & 0xf).toBe(Opcode.IMMEDIATE);
      expect(b.cq.filter((e) => e.qp === qp).map((e) => e.text)).toEqual(['first FPDU', 'sent']);
      expect(b.broken).toEqual([]);

      // Every QP_* register reads what the host wrote, and the capabilities are the top's.
      const map = rnicRegisterMap({ width: W, qps: DEFAULT_CONFIG.qps, stagDepth: DEFAULT_CONFIG.stagDepth });
      const reads: { name: string; resp: number; data: number; want: number }[] = [];
      const want = [
        ...qpConfigWrites(map, qp, cfg).flatMap((op) => (op.kind === 'write' ? [{ name: op.name, addr: op.addr, data: op.data }] : [])),
        ...(['ID', 'CAP_QPS', 'CAP_STAG_DEPTH', 'CAP_WIDTH'] as const).map((n) => { const reg = registerNamed(map, n); return { name: n, addr: reg.offset, data: Number(reg.fields[0]!.reset) }; }),
      ];
      for (const w of want) b.axil!.read({ addr: w.addr, done: (resp, data) => void reads.push({ name: w.name, resp, data, want: w.data }) });
      b.until(() => b.axil!.idle, 10_000, 'the register reads');
      expect(reads.filter((x) => x.resp !== AXI_RESP.OKAY || x.data !== x.want)).toEqual([]);
      expect(reads.map((x) => x.name)).toContain('QP_COMMIT');
      expect(reads.find((x) => x.name === 'CAP_QPS')!.data).toBe(DEFAULT_CONFIG.qps);
    });
  });
});

describe('rnic_top_axil_w8 against the model', () => {
  test('random work requests and peer messages with faults on 64 of 1024 QPs, every connection and its STags configured over AXI4-Lite: no mismatch, no violation', () => {
    const res = withSeed(19, (r) => cosimRnic({ width: W, seed: r.u32(), ops: 1000, faults: 0.1, axil: true }));
    expect(res.firstMismatch).toBeNull();
    expect(res.firstViolation).toBeNull();
    expect(res.mismatches).toBe(0);
    expect(res.violations).toBe(0);
    expect(res.ops).toBe(1000);
    expect(res.streams).toBeGreaterThan(100);
    expect(res.fpdusIn).toBeGreaterThan(300);
    expect(res.fpdusOut).toBeGreaterThan(300);
  });
});
