import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { rdmapTxRespModule, rdmapTxRespName } from '../../hdl-gen/blocks/rdmap-tx-resp';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { openDut } from '../../sim/harness/open-dut';
import { cosimRdmapTxResp, runRdmapTxResp, type RespCosimOptions } from '../../sim/cosim/rdmap-tx-resp';
import { BackgroundMemory } from '../../sim/harness/memory';
import { OUTPUT_STAGES } from '../../hdl-gen/blocks/ddp-tx-output';
import type { SimModel } from '../../sim/verilator/model';
import { SEED, withSeed } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const WIDTHS = [8, 64] as const;

const replay = (o: RespCosimOptions) => `replay: cosimRdmapTxResp(${JSON.stringify({ ...o, model: undefined })}) (RNIC_SEED=${SEED})`;

const models = new Map<number, SimModel>();
beforeAll(() => {
  for (const w of WIDTHS) models.set(w, openDut(rdmapTxRespName(w, 1)).model);
});
afterAll(() => {
  for (const m of models.values()) m.close();
});

describe.each(WIDTHS)('rdmap_tx_resp_w%i against segmentMessage, the atomic unit model and encodeTerminate', (width) => {
  // MULPDU: tiny (one or two beats per segment), odd, Ethernet-sized and jumbo.
  test.each([
    [64, false],
    [100, true],
    [1460, false],
    [9000, true],
  ])(
    'MULPDU %i, big-endian atomics %s: every ULPDU octet and the final memory, random back-pressure and read latency 1..6',
    (mulpdu, bigEndian) =>
      withSeed(width * 100003 + mulpdu, (r) => {
        const o: RespCosimOptions = { width, seed: r.u32(), requests: 400, mulpdu, bigEndian };
        const res = cosimRdmapTxResp({ ...o, model: models.get(width)! });
        expect(res.firstMismatch, replay(o)).toBeUndefined();
        expect(res.mismatches).toBe(0);
        const c = res.coverage;
        expect(c.reads).toBeGreaterThan(80);
        expect(c.segments).toBeGreaterThan(c.reads);
        expect(c.atomics).toBeGreaterThan(40);
        expect(c.terminates).toBeGreaterThan(32); // every M/D/R/tagged combination, twice
        expect(c.msnWrapped).toBe(true);
      }),
  );
});

describe('rdmap_tx_resp Read Response at full rate (exact Verilator cycle counts)', () => {
  // 64 KiB, MULPDU 4110: 16 segments of 4096 octets, ⌈4110 / W⌉ beats each. From the request
  // handshake: the first read 1 cycle later, its data L cycles after that, one cycle through the
  // data FIFO's RAM into its head register, OUTPUT_STAGES more through the output stages (realign,
  // output register), then one beat per cycle: beats + L + 2 + OUTPUT_STAGES cycles to the last
  // beat's handshake, +1 when the first payload octets
  // straddle two memory beats.
  test.each([
    [8, '0x10000', 4],
    // A phase with neither an aligned start nor a straddle: the header beat leaves before the data
    // (a first beat planned as carrying payload waits for it and costs a cycle).
    [8, '0x10005', 4],
    [8, '0x1003f', 4],
    [64, '0x10000', 4],
    [64, '0x1003f', 4],
    [64, '0x10005', 1],
  ])('w%i, source %s, read latency %i: one beat per cycle, segment headers cost only their beats', (width, src, latency) => {
    const srcAddr = BigInt(src);
    const size = 64 * 1024;
    const mulpdu = 4110;
    const run = runRdmapTxResp({
      width, requests: [{ kind: 'read', sinkStag: 0x1234, sinkTo: 0x9000n, srcAddr, size }], memory: new BackgroundMemory(), mulpdu,
      bigEndian: false, initialMsn: 1, seed: 5, reqGap: 0, rdPause: 0, wrPause: 0, sinkPause: 0, minLatency: latency, maxLatency: latency,
      model: models.get(width)!,
    });
    expect(run.violations).toEqual([]);
    expect(run.ulpdus.length).toBe(16);
    const beats = 16 * Math.ceil(mulpdu / width);
    // The first payload lane is 14 mod W: the first beat's payload straddles when the source phase is past it.
    const straddle = srcAddr % BigInt(width) > BigInt(14 % width) ? 1 : 0;
    const cycles = run.lastBeatAt[15]! - run.acceptedAt[0]!;
    console.log(`rdmap_tx_resp_w${width}: 64 KiB Read Response from ${src}, latency ${latency}: ${cycles} cycles for ${beats} beats`);
    // At W = 8 the first beat is all header and leaves while the first read is under way.
    expect(cycles).toBe(beats + latency + 2 + OUTPUT_STAGES + straddle - (width === 8 ? 1 : 0));
  });

  // Host memory behind PCIe (reads answered 200 cycles later): 256 reads in flight keep the
  // Read Response at one beat per cycle; only the first read's latency shows.
  test.each([8, 64])('w%i, read latency 200: the latency is paid once per Read Response', (width) => {
    const latency = 200;
    const size = 64 * 1024;
    const mulpdu = 4110;
    const run = runRdmapTxResp({
      width, requests: [{ kind: 'read', sinkStag: 0x1234, sinkTo: 0x9000n, srcAddr: 0x10000n, size }], memory: new BackgroundMemory(), mulpdu,
      bigEndian: false, initialMsn: 1, seed: 5, reqGap: 0, rdPause: 0, wrPause: 0, sinkPause: 0, minLatency: latency, maxLatency: latency,
      model: models.get(width)!,
    });
    expect(run.violations).toEqual([]);
    const beats = 16 * Math.ceil(mulpdu / width);
    const cycles = run.lastBeatAt[15]! - run.acceptedAt[0]!;
    console.log(`rdmap_tx_resp_w${width}: 64 KiB Read Response, latency ${latency}: ${cycles} cycles for ${beats} beats`);
    expect(cycles).toBe(beats + latency + 2 + OUTPUT_STAGES - (width === 8 ? 1 : 0));
  });
});

describe('rdmap_tx_resp checks catch a broken RTL', () => {
  const cases = [
    // The TO of the next segment advanced by MULPDU instead of MULPDU − 14.
    ['TO advanced by the whole ULPDU', (v: string) => v.replace(/(rr_to_next = rr_to_reg \+ \{48'h0, )seg_room\}/, '$1resp_mulpdu_reg}')],
    // A beat whose lane 0 is the first octet of the FIFO head (payload aligned to the beats
    // consumed so far) built from the held beat instead.
    ['the held beat taken for the FIFO head at a beat boundary', (v: string) => v.replace(/assign rr_lo_head = _t\d+ <= 5'h8;/, (s) => s.replace("<= 5'h8", "< 5'h8"))],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name], i) => [name, mutants[i]!] as const))('%s', (_, mutate) => {
    const text = emitVerilog(rdmapTxRespModule(8, 1));
    expect(mutate(text)).not.toBe(text);
    const model = openDut(rdmapTxRespName(8, 1), { mutate }).model;
    try {
      const r = cosimRdmapTxResp({ width: 8, seed: 11, requests: 150, mulpdu: 100, model });
      expect(r.mismatches).toBeGreaterThan(0);
    } finally {
      model.close();
    }
  });
});

describe('rdmap_tx_resp Verilog', () => {
  test.each([...WIDTHS])('rdmap_tx_resp_w%i (with atomic_unit) is lint-clean under verilator -Wall', (width) => expect(verilatorLint(rdmapTxRespModule(width, 4))).toBe(''), 60_000);

  test.each([...WIDTHS])(
    'rdmap_tx_resp_w%i synthesizes in yosys without latches (to gates at 8 octets, the coarse netlist at 64)',
    (width) => expect(yosysSynthNoLatch(rdmapTxRespModule(width, 4), [], { gates: width === 8 })).toMatch(/rdmap_tx_resp_w\d+_q4[\s\S]*Number of cells/),
    120_000,
  );

  test('other widths are a RangeError naming the value', () => {
    expect(() => rdmapTxRespModule(4)).toThrow(/got 4/);
    expect(() => rdmapTxRespModule(128)).toThrow(RangeError);
  });
});

describe('rnic cosim --dut rdmap_tx_resp', () => {
  test('runs the seeded workload on the committed rtl/ and exits 0 with no mismatch', () => {
    const p = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'rdmap_tx_resp', '--qps', String(DEFAULT_CONFIG.qps), '--frames', '60', '--seed', '2', '--rtl', 'rtl', '--json'], { encoding: 'utf8' });
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout);
    expect(r).toMatchObject({ dut: 'rdmap_tx_resp', seed: 2, mismatches: 0 });
    expect(r.coverage.reads).toBeGreaterThan(0);
    expect(r.replay).toBe(`rnic cosim --dut rdmap_tx_resp --width 8 --qps ${DEFAULT_CONFIG.qps} --seed 2 --frames 60 --rtl rtl --vcd rdmap_tx_resp.vcd`);
  });
});
