import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { ddpTxModule } from '../../hdl-gen/blocks/ddp-tx';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { DEFAULT_RESET_CYCLES } from '../../sim/cocotb/testbench';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { openDut } from '../../sim/harness/open-dut';
import { cosimDdpTx, runDdpTx, type TxCosimOptions, type TxRequest } from '../../sim/cosim/ddp-tx';
import { BackgroundMemory } from '../../sim/harness/memory';
import { OUTPUT_STAGES } from '../../hdl-gen/blocks/ddp-tx-output';
import type { SimModel } from '../../sim/verilator/model';
import { SEED, withSeed } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const WIDTHS = [8, 64] as const;

const replay = (o: TxCosimOptions) => `replay: cosimDdpTx(${JSON.stringify({ ...o, model: undefined })}) (RNIC_SEED=${SEED})`;

const models = new Map<number, SimModel>();
beforeAll(() => {
  for (const w of WIDTHS) models.set(w, openDut(`ddp_tx_w${w}`).model);
});
afterAll(() => {
  for (const m of models.values()) m.close();
});

describe.each(WIDTHS)('ddp_tx_w%i against RdmapEndpoint.post() and pull()', (width) => {
  // MULPDU: tiny (the Atomic Request takes two segments below 70), odd, Ethernet-sized and jumbo.
  test.each([64, 100, 1460, 9000])(
    'MULPDU %i: every ULPDU octet of 500 random work requests of every kind, random back-pressure and read latency 1..6, MSN wrap',
    (mulpdu) =>
      withSeed(width * 100003 + mulpdu, (r) => {
        const o: TxCosimOptions = { width, seed: r.u32(), requests: 500, mulpdu };
        const res = cosimDdpTx({ ...o, model: models.get(width)! });
        expect(res.firstMismatch, replay(o)).toBeUndefined();
        expect(res.mismatches).toBe(0);
        const c = res.coverage;
        for (const k of ['write', 'send'] as const) expect(c[k]).toBeGreaterThan(100);
        for (const k of ['read', 'immediate', 'atomic'] as const) expect(c[k]).toBeGreaterThan(25);
        expect(res.ulpdus).toBeGreaterThan(500);
        expect(c.msnWrapped).toBe(true);
      }),
  );
});

describe('ddp_tx Write and Send at full rate (exact Verilator cycle counts)', () => {
  // 64 KiB in 16 segments of 4096 payload octets (MULPDU 4110 tagged, 4114 untagged), ⌈MULPDU / W⌉
  // beats each. From the work request handshake: the first read 1 cycle later, its data L cycles
  // after that, one cycle through the data FIFO's RAM into its head register, OUTPUT_STAGES more
  // through the output stages (realign, output register), then one beat per cycle: beats + L + 2
  // + OUTPUT_STAGES cycles to the last beat's handshake,
  // +1 when the first payload octets straddle two memory beats, − the whole header beats that
  // leave before the first data (⌊header / W⌋).
  test.each([
    [8, 'write', '0x10000', 4],
    [8, 'write', '0x1003f', 4],
    [8, 'send', '0x10005', 4],
    [8, 'send', '0x10011', 1],
    [64, 'write', '0x10000', 4],
    [64, 'write', '0x1003f', 4],
    [64, 'send', '0x10011', 1],
    [64, 'send', '0x10013', 4],
  ] as const)('w%i, %s from %s, read latency %i: one beat per cycle, segment headers cost only their beats', (width, kind, src, latency) => {
    const addr = BigInt(src);
    const len = 64 * 1024;
    const header = kind === 'write' ? 14 : 18;
    const mulpdu = 4096 + header;
    const q: TxRequest = kind === 'write' ? { kind, stag: 0x1234, to: 0x9000n, addr, len } : { kind, solicited: false, invalidate: null, addr, len };
    const run = runDdpTx({
      width, requests: [q], memory: new BackgroundMemory(), mulpdu, initialMsn: 1, seed: 5, wrGap: 0, rdPause: 0, sinkPause: 0,
      minLatency: latency, maxLatency: latency, model: models.get(width)!,
    });
    expect(run.violations).toEqual([]);
    expect(run.ulpdus.length).toBe(16);
    expect(run.sent).toBe(1);
    const beats = 16 * Math.ceil(mulpdu / width);
    const straddle = addr % BigInt(width) > BigInt(header % width) ? 1 : 0;
    const cycles = run.lastBeatAt[15]! - run.acceptedAt[0]!;
    console.log(`ddp_tx_w${width}: 64 KiB ${kind} from ${src}, latency ${latency}: ${cycles} cycles for ${beats} beats`);
    expect(cycles).toBe(beats + latency + 2 + OUTPUT_STAGES + straddle - Math.floor(header / width));
    expect(cycles).toBeLessThanOrEqual(beats + latency + 3 + OUTPUT_STAGES); // at most one cycle over the pipeline's fill
  });
});

describe('ddp_tx behind a slow host memory (exact Verilator cycle counts)', () => {
  // 16 queued 4 KiB Writes, reads answered 200 cycles after their handshake (host memory over
  // PCIe at 250 MHz): the queue lets the fetcher read each Write's data while the one before it is
  // sent, so the latency is paid once: beats + L + 2 + OUTPUT_STAGES cycles as for one message, plus one cycle
  // between work requests, − the whole header beats of the first segment.
  test.each([8, 64])('w%i, read latency 200: one beat per cycle after the first read returns', (width) => {
    const latency = 200;
    const n = 16;
    const len = 4096;
    const requests: TxRequest[] = Array.from({ length: n }, (_, i) => ({ kind: 'write', stag: 0x1234, to: 0x9000n, addr: 0x10000n + BigInt(i * len), len }));
    const run = runDdpTx({
      width, requests, memory: new BackgroundMemory(), mulpdu: len + 14, initialMsn: 1, seed: 5, wrGap: 0, rdPause: 0, sinkPause: 0,
      minLatency: latency, maxLatency: latency, model: models.get(width)!,
    });
    expect(run.violations).toEqual([]);
    expect(run.sent).toBe(n);
    const beats = n * Math.ceil((len + 14) / width);
    const cycles = run.lastBeatAt[n - 1]! - run.acceptedAt[0]!;
    console.log(`ddp_tx_w${width}: ${n} × 4 KiB Writes, latency ${latency}: ${cycles} cycles for ${beats} beats`);
    expect(cycles).toBe(beats + latency + 2 + OUTPUT_STAGES + (n - 1) - Math.floor(14 / width));
  });
});

/** The mutants of ddp_tx_w8 below: one schemata build for those it can hold (sim/harness/mutant-schemata.ts). */
const [untaggedMoOverwritten, idleWithBeatOffered] = mutantGroup([
  (v: string) => v.replace(/\(seg_untagged \? 4'b0010 : 4'b0000\)/, "(seg_untagged ? 4'b0000 : 4'b0000)"),
  (v: string) => v.replace(/^assign idle = in_idle & \(~\(beat_valid_reg \| out_valid_reg\)\) & (_t\d+);$/m, 'assign idle = in_idle & $1;'),
]);

describe('ddp_tx checks catch a broken RTL', () => {
  test('the MO of an untagged segment overwritten by payload (W = 8: header lanes of beat 2)', () => {
    const mutate = untaggedMoOverwritten;
    const text = emitVerilog(ddpTxModule(8));
    expect(mutate(text)).not.toBe(text);
    const model = openDut('ddp_tx_w8', { mutate }).model;
    try {
      const r = cosimDdpTx({ width: 8, seed: 11, requests: 150, mulpdu: 100, model });
      expect(r.mismatches).toBeGreaterThan(0);
      // The first difference names its cycle (here: the work requests stall, found when the run gives up).
      expect(r.firstMismatch!.cycle).toBeGreaterThan(DEFAULT_RESET_CYCLES);
    } finally {
      model.close();
    }
  });
});

describe('ddp_tx: idle is a contract the top relies on', () => {
  test('idle with a beat offered on m_axis (the campaign\'s ddp_tx_w8 #5) is a violation with its cycle', () => {
    const mutate = idleWithBeatOffered;
    const text = emitVerilog(ddpTxModule(8));
    expect(mutate(text)).not.toBe(text);
    const model = openDut('ddp_tx_w8', { mutate }).model;
    try {
      const r = cosimDdpTx({ width: 8, seed: 1, requests: 300, mulpdu: 1460, model });
      expect(r.firstMismatch?.actual).toMatch(/idle is 1 while m_axis_tvalid is 1 \(cycle \d+\)/);
    } finally {
      model.close();
    }
  });
});

describe('ddp_tx Verilog', () => {
  test.each([...WIDTHS])('ddp_tx_w%i is lint-clean under verilator -Wall', (width) => expect(verilatorLint(ddpTxModule(width))).toBe(''), 60_000);

  test.each([...WIDTHS])(
    'ddp_tx_w%i synthesizes in yosys without latches (to gates at 8 octets, the coarse netlist at 64)',
    (width) => expect(yosysSynthNoLatch(ddpTxModule(width), [], { gates: width === 8 })).toMatch(/ddp_tx_w\d+[\s\S]*Number of cells/),
    120_000,
  );

  test('other widths are a RangeError naming the value', () => {
    expect(() => ddpTxModule(4)).toThrow(/got 4/);
    expect(() => ddpTxModule(128)).toThrow(RangeError);
  });
});

describe('rnic cosim --dut ddp_tx', () => {
  test('runs the seeded workload on the committed rtl/ (the top\'s requester: --qps of the default configuration) and exits 0 with no mismatch', () => {
    const p = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'ddp_tx', '--qps', String(DEFAULT_CONFIG.qps), '--frames', '60', '--seed', '2', '--rtl', 'rtl', '--json'], { encoding: 'utf8' });
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout);
    expect(r).toMatchObject({ dut: 'ddp_tx', module: `ddp_tx_w8_q${DEFAULT_CONFIG.qps}`, seed: 2, mismatches: 0 });
    expect(r.coverage.write).toBeGreaterThan(0);
    expect(r.coverage.qpsUsed).toBeGreaterThan(32); // 60 work requests spread over the QPs
    expect(r.replay).toBe(`rnic cosim --dut ddp_tx --width 8 --qps ${DEFAULT_CONFIG.qps} --seed 2 --frames 60 --rtl rtl --vcd ddp_tx.vcd`);
  });
  test('one QP runs the one-QP block, generated (ddp_tx_w8)', () => {
    const p = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'ddp_tx', '--frames', '40', '--seed', '2', '--json'], { encoding: 'utf8' });
    expect(p.status, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout)).toMatchObject({ dut: 'ddp_tx', module: 'ddp_tx_w8', seed: 2, mismatches: 0 });
  });
});
