import { afterAll, describe, expect, test } from 'vitest';
import { ddpTxModule } from '../../hdl-gen/blocks/ddp-tx';
import { OUTPUT_STAGES } from '../../hdl-gen/blocks/ddp-tx-output';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { cosimDdpTxShared, fairnessBound, heldBound, runDdpTxShared, type SharedCosimOptions } from '../../sim/cosim/ddp-tx-shared';
import type { TxRequest } from '../../sim/cosim/wr-request';
import { BackgroundMemory } from '../../sim/harness/memory';
import { openDut } from '../../sim/harness/open-dut';
import type { SimModel } from '../../sim/verilator/model';
import { SEED, withSeed } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

/** Three Verilator builds: two widths at 4 QPs, and 16 QPs at W = 8. */
const BUILDS = [
  [8, 4],
  [64, 4],
  [8, 16],
] as const;

const models = new Map<string, SimModel>();
const modelOf = (w: number, q: number): SimModel => {
  const k = `${w}_${q}`;
  let m = models.get(k);
  if (!m) models.set(k, (m = openDut(`ddp_tx_w${w}_q${q}`).model));
  return m;
};
afterAll(() => {
  for (const m of models.values()) m.close();
});

const replay = (o: SharedCosimOptions) => `replay: cosimDdpTxShared(${JSON.stringify({ ...o, model: undefined })}) (RNIC_SEED=${SEED})`;

describe.each(BUILDS)('ddp_tx_w%i_q%i against one RdmapEndpoint per QP', (width, qps) => {
  test.each([
    ['random holds', true],
    ['no holds', false],
  ] as const)(
    'every ULPDU octet of 400 random work requests of every kind to random QPs (own MULPDU and MSN each), back-pressure, read latency 1..6, %s',
    (_name, holds) =>
      withSeed(width * 1009 + qps * 31 + (holds ? 1 : 0), (r) => {
        const o: SharedCosimOptions = { width, qps, seed: r.u32(), requests: 400, holds };
        const res = cosimDdpTxShared({ ...o, model: modelOf(width, qps) });
        expect(res.firstMismatch, replay(o)).toBeUndefined();
        expect(res.mismatches).toBe(0);
        const c = res.coverage;
        for (const k of ['write', 'send'] as const) expect(c[k]).toBeGreaterThan(60);
        for (const k of ['read', 'immediate', 'atomic'] as const) expect(c[k]).toBeGreaterThan(15);
        expect(c.qpsUsed).toBe(qps);
        // Some QP has a MULPDU below 70 (its Atomic Requests go out in two segments) and some QP's MSNs wrap.
        expect(c.atomicSplit).toBe(true);
        expect(c.msnWrapped).toBe(true);
        const bound = fairnessBound(width, qps);
        console.log(`ddp_tx_w${width}_q${qps} (${_name}): ${res.ulpdus} ULPDUs; most messages of other QPs while one waited: ${res.maxWait} (bound ${bound}); most sent inside a hold: ${res.maxSentWhileHeld}`);
        expect(res.maxWait, replay(o)).toBeLessThanOrEqual(bound);
        expect(res.maxSentWhileHeld, replay(o)).toBeLessThanOrEqual(heldBound(width));
      }),
    240_000,
  );
});

describe('ddp_tx shared: QPs switch at full rate (exact Verilator cycle counts)', () => {
  // 4 KiB Writes alternating between the QPs, MULPDU 4110 (one segment each): 65 beats each at
  // W = 64 and one cycle between work requests, as for one QP; the scheduler adds a fixed latency
  // in front of the first (input FIFO, enqueue, scheduler FIFO, serve: SCHED_LATENCY cycles).
  // One QP (the same QP served back to back), two and four alternating.
  test.each([1, 2, 4])('w64, %i QP(s) in turn, read latency 4: one beat per cycle', (n) => {
    const SCHED_LATENCY = 7;
    const width = 64;
    const latency = 4;
    const count = 32;
    const len = 4096;
    const requests = Array.from({ length: count }, (_, i) => ({ qp: i % n, q: { kind: 'write', stag: 0x1234 + i, to: 0x9000n, addr: 0x10000n + BigInt(i * len), len } as TxRequest }));
    const run = runDdpTxShared({
      width, qps: 4, requests, configs: Array.from({ length: 4 }, () => ({ mulpdu: len + 14, initialMsn: 1 })), memory: new BackgroundMemory(), seed: 5,
      wrGap: 0, rdPause: 0, sinkPause: 0, minLatency: latency, maxLatency: latency, model: modelOf(64, 4),
    });
    expect(run.violations).toEqual([]);
    expect(run.sentByQp.reduce((a, b) => a + b, 0)).toBe(count);
    const beats = count * Math.ceil((len + 14) / width);
    const last = Math.max(...run.lastBeatAt);
    const cycles = last - run.acceptedAt[0]!;
    const steady = last - Math.min(...run.lastBeatAt);
    const rate = ((count - 1) * len) / steady;
    console.log(`ddp_tx_w64_q4: ${count} × 4 KiB Writes over ${n} QPs: ${cycles} cycles for ${beats} beats; ${rate.toFixed(2)} payload octets per cycle after the first`);
    expect(cycles).toBe(beats + (count - 1) + latency + 2 + OUTPUT_STAGES + SCHED_LATENCY);
    expect(rate).toBeGreaterThanOrEqual(50);
  });
});

describe('ddp_tx shared: the checks catch a broken RTL', () => {
  test('sched_hold ignored: a QP held from the start sends', () => {
    const mutate = (v: string) => v.replace(/^(\s*op_held_next = )sched_hold;$/m, "$11'b0;");
    const text = emitVerilog(ddpTxModule(8, { qps: 4 }));
    expect(mutate(text)).not.toBe(text);
    const model = openDut('ddp_tx_w8_q4', { mutate }).model;
    try {
      const r = cosimDdpTxShared({ width: 8, qps: 4, seed: 3, requests: 200, model });
      expect(r.holds.some((h) => h.from === 0)).toBe(true);
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch?.what).toBe('held QP');
    } finally {
      model.close();
    }
  }, 240_000);
});

describe('ddp_tx shared Verilog', () => {
  test.each([
    [8, 4],
    [64, 16],
  ])('ddp_tx_w%i_q%i is lint-clean under verilator -Wall', (w, q) => expect(verilatorLint(ddpTxModule(w, { qps: q }))).toBe(''), 60_000);

  test('ddp_tx_w8_q4 synthesizes in yosys without latches', () => expect(yosysSynthNoLatch(ddpTxModule(8, { qps: 4 }))).toMatch(/ddp_tx_w8_q4[\s\S]*Number of cells/), 240_000);

  test('qps out of range is a RangeError naming the value', () => {
    expect(() => ddpTxModule(8, { qps: 0 })).toThrow(/got 0/);
    expect(() => ddpTxModule(8, { qps: 1.5 })).toThrow(RangeError);
  });
});
