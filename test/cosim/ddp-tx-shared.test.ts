import { afterAll, describe, expect, test } from 'vitest';
import { ddpTxModule } from '../../hdl-gen/blocks/ddp-tx';
import { OUTPUT_STAGES } from '../../hdl-gen/blocks/ddp-tx-output';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { cosimDdpTxShared, fairnessBound, runDdpTxShared, type SharedCosimOptions, type SharedRunOptions } from '../../sim/cosim/ddp-tx-shared';
import type { TxRequest } from '../../sim/cosim/wr-request';
import { BackgroundMemory } from '../../sim/harness/memory';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
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

/** The mutants of ddp_tx_w8_q4 the tests below show caught: one schemata build for those it can hold (sim/harness/mutant-schemata.ts). */
const [popMissesRelease, releaseWithCfg, releaseMissesEnqueue, holdIgnored, releasesLost] = mutantGroup([
  (v: string) => v.replace(/(serve_issue & \(act_head_reg == op_qp_reg\))/, "1'b0"),
  (v: string) => v.replace(/^(assign rel_next = release_valid) & .*;$/m, '$1;'),
  (v: string) => v.replace(/(qp_ctx_fwd_now = )\(rel_issue & \(rel_qp_reg == op_qp_reg\)\)/, "$11'b0"),
  (v: string) => v.replace(/^(\s*op_cfg_hold_next = )cfg_hold;$/m, "$11'b0;"),
  (v: string) => v.replace(/^(assign rel_next = )release_valid & .*;$/m, "$11'b0;"),
]);
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
    ['QPs loaded held, released at random', true],
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
        const released = [...res.releasedAt].map(([q, c]) => `QP ${q} at ${c}`).join(', ');
        console.log(`ddp_tx_w${width}_q${qps} (${_name}): ${res.ulpdus} ULPDUs; most messages of other QPs while one waited: ${res.maxWait} (bound ${bound}); released: ${released || 'none held'}`);
        expect(res.maxWait, replay(o)).toBeLessThanOrEqual(bound);
        if (holds) expect(res.holds.length).toBeGreaterThan(0);
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

describe('ddp_tx shared: a held QP waits for its release, and is served right after it', () => {
  // One Immediate Data for QP 1, nothing else: from its handshake to its ULPDU's last beat K
  // cycles, of which 5 to the scheduler's pop (input FIFO 2, enqueue 1, scheduler FIFO 2). Loaded
  // held, it is popped every third cycle and put back. A release taken in cycle t issues in t + 1
  // (a pop due then waits a cycle) and is written back in t + 2, forwarded to a pop in t + 2: by
  // the phase of the pops, the pop that serves it comes 2, 2 or 3 cycles after the release, so
  // the ULPDU ends K − 3, K − 3 or K − 2 cycles after it (a release not forwarded to the pop in
  // t + 2: three more).
  const immediate: TxRequest = { kind: 'immediate', solicited: false, imm: 0x1122334455667788n };
  const base = (holds: SharedRunOptions['holds']): SharedRunOptions => ({
    width: 8, qps: 4, requests: [{ qp: 1, q: immediate }], configs: Array.from({ length: 4 }, () => ({ mulpdu: 1000, initialMsn: 1 })),
    memory: new BackgroundMemory(), seed: 9, wrGap: 0, rdPause: 0, sinkPause: 0, minLatency: 2, maxLatency: 2, model: modelOf(8, 4), ...(holds && { holds }),
  });
  test('released in three consecutive cycles (every phase of its pops): its ULPDU ends K − 3, K − 3, K − 2 cycles after the release', () => {
    const free = runDdpTxShared(base(undefined));
    expect(free.violations).toEqual([]);
    const k = free.lastBeatAt[0]! - free.acceptedAt[0]!;
    const after = [300, 301, 302].map((release) => {
      const run = runDdpTxShared(base([{ qp: 1, release }]));
      expect(run.violations).toEqual([]);
      expect(run.heldBeats).toEqual([]);
      expect(run.acceptedAt[0]!).toBeLessThan(release - 50);
      return run.lastBeatAt[0]! - run.releasedAt.get(1)!;
    });
    console.log(`ddp_tx_w8_q4: an Immediate's ULPDU ends ${k} cycles after its handshake, ${after.join(' / ')} after a release`);
    expect(after.slice().sort((a, b) => a - b)).toEqual([k - 3, k - 3, k - 2]);
  });
  /** Each release cycle's run on `model`: the ULPDU's end after the release, QP 1's messages sent, the violations. */
  const released = (model: SimModel, requests: number, releases: readonly number[]) =>
    releases.map((release) => {
      const o = base([{ qp: 1, release }]);
      const run = runDdpTxShared({ ...o, requests: Array.from({ length: requests }, () => o.requests[0]!), model });
      return { end: run.lastBeatAt[0]! - run.releasedAt.get(1)!, sent: run.sentByQp[1]!, violations: run.violations, accepted: run.acceptedAt };
    });
  test('a release right behind an enqueue of the same QP reads the enqueue\'s write-back: nothing lost', () => {
    // Two Immediates for the held QP, the release taken 0..5 cycles after the first handshake: its
    // lookup (a cycle later) meets the enqueues' write-backs (3 cycles after each handshake).
    const h = released(modelOf(8, 4), 2, [300])[0]!.accepted[0]!;
    for (const r of released(modelOf(8, 4), 2, [h, h + 1, h + 2, h + 3, h + 4, h + 5])) {
      expect(r.violations).toEqual([]);
      expect(r.sent).toBe(2);
    }
  });
  const mutantModel = (mutate: (v: string) => string) => {
    const text = emitVerilog(ddpTxModule(8, { qps: 4 }));
    expect(mutate(text)).not.toBe(text);
    return openDut('ddp_tx_w8_q4', { mutate }).model;
  };
  // QP 1 loaded held (released at cycle 400), a stray release of QP 1 one cycle either side of its cfg or in it.
  const around = (d: number, model?: SimModel) => {
    const o = { ...base([{ qp: 1, release: 400 }]), ...(model && { model }) };
    const c = runDdpTxShared(o).cfgAt[1]!;
    return runDdpTxShared({ ...o, spareReleases: [{ qp: 1, at: c + d, early: true }] });
  };
  test('a release taken with a cfg of its QP is the old connection\'s (dropped); one a cycle before it, undone by it; one a cycle after, lifts the new hold', () => {
    for (const d of [-1, 0]) {
      const run = around(d);
      expect(run.violations, `release ${d} cycle(s) from the cfg`).toEqual([]);
      expect(run.heldBeats, `release ${d} cycle(s) from the cfg`).toEqual([]);
      expect(run.sentByQp[1]).toBe(1);
    }
    const late = around(1);
    expect(late.heldBeats.length).toBeGreaterThan(0);
    expect(late.sentByQp[1]).toBe(1);
  });
  test('the checks catch a pop that misses the release written back in its cycle (the QP skipped once more)', () => {
    const model = mutantModel(popMissesRelease);
    try {
      const free = runDdpTxShared({ ...base(undefined), model });
      const k = free.lastBeatAt[0]! - free.acceptedAt[0]!;
      const ends = released(model, 1, [300, 301, 302]).map((r) => r.end);
      expect(ends.slice().sort((a, b) => a - b)).not.toEqual([k - 3, k - 3, k - 2]);
    } finally {
      model.close();
    }
  }, 240_000);
  test('the checks catch a release taken with a cfg of its QP that lifts the new hold', () => {
    const model = mutantModel(releaseWithCfg);
    try {
      expect(around(0, model).heldBeats.length).toBeGreaterThan(0);
    } finally {
      model.close();
    }
  }, 240_000);
  test('the checks catch a release that misses the enqueue written back in its cycle (a work request lost)', () => {
    const model = mutantModel(releaseMissesEnqueue);
    try {
      const h = released(model, 2, [300])[0]!.accepted[0]!;
      const runs = released(model, 2, [h, h + 1, h + 2, h + 3, h + 4, h + 5]);
      expect(runs.some((r) => r.sent < 2 && r.violations.length > 0)).toBe(true);
    } finally {
      model.close();
    }
  }, 240_000);
});

describe('ddp_tx shared: the checks catch a broken RTL', () => {
  const mutantRun = (mutate: (v: string) => string, o: Omit<SharedCosimOptions, 'model' | 'width' | 'qps'>) => {
    const text = emitVerilog(ddpTxModule(8, { qps: 4 }));
    expect(mutate(text)).not.toBe(text);
    const model = openDut('ddp_tx_w8_q4', { mutate }).model;
    try {
      return cosimDdpTxShared({ width: 8, qps: 4, ...o, model });
    } finally {
      model.close();
    }
  };
  test('cfg_hold ignored: a QP loaded held sends before its release', () => {
    const r = mutantRun(holdIgnored, { seed: 3, requests: 200 });
    expect(r.holds.length).toBeGreaterThan(0);
    expect(r.mismatches).toBeGreaterThan(0);
    expect(r.firstMismatch?.what).toBe('held QP');
  }, 240_000);
  test('releases lost: a QP released stays held, idle with its work requests, which never go', () => {
    const r = mutantRun(releasesLost, { seed: 3, requests: 40, maxSize: 300 });
    expect(r.mismatches).toBeGreaterThan(1);
    expect(r.firstMismatch?.what).toBe('protocol');
    expect(r.firstMismatch?.actual).toMatch(/^idle with \d+ work request\(s\) of QP \d+, not held/);
  }, 240_000);
});

describe('ddp_tx shared Verilog', () => {
  test.each([
    [8, 4],
    [64, 16],
  ])('ddp_tx_w%i_q%i is lint-clean under verilator -Wall', (w, q) => expect(verilatorLint(ddpTxModule(w, { qps: q }))).toBe(''), 60_000);

  // Coarse: its gates are ddp_tx_w8's (mapped in ddp-tx.test.ts) plus the context memories, which stay $mem.
  test('ddp_tx_w8_q4 elaborates in yosys to a coarse netlist without latches that passes check -assert', () => expect(yosysSynthNoLatch(ddpTxModule(8, { qps: 4 }), [], { gates: false })).toMatch(/ddp_tx_w8_q4[\s\S]*Number of cells/), 240_000);

  test('qps out of range is a RangeError naming the value', () => {
    expect(() => ddpTxModule(8, { qps: 0 })).toThrow(/got 0/);
    expect(() => ddpTxModule(8, { qps: 1.5 })).toThrow(RangeError);
  });
});
