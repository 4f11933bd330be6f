import { describe, expect, test } from 'vitest';
import { axiMemName, rnicAxiMemModule, type AxiMemOptions } from '../../hdl-gen/blocks/rnic-axi-mem';
import { emitVerilog, LINE_WIDTH } from '../../hdl-gen/emit/verilog';
import { axiMemRate, cosimAxiMem, type AxiMemCosimOptions } from '../../sim/cosim/axi-mem';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { withSeed } from '../support/random';
import { verilatorLint } from '../support/rtl-checks';

/**
 * rnic_axi_mem_w<W> (hdl-gen/blocks/rnic-axi-mem.ts) alone against the native ports' contract
 * (sim/cosim/axi-mem.ts): an AXI4 slave memory with random pauses on every channel, random
 * latency, answers of different IDs out of order and interleaved, and the protocol checks.
 */

/** A small adapter: 4-beat bursts, no wait, 2 write slots, 4 read IDs sharing an 8-beat reorder buffer (credits bind). */
const SMALL: AxiMemOptions = { maxBurst: 4, wait: 1, writeSlots: 2, writeFifo: 8, readIds: 4, readBuffer: 8, readQueue: 4 };

function run(salt: number, o: Omit<AxiMemCosimOptions, 'seed'>) {
  return withSeed(salt, (r) => cosimAxiMem({ ...o, seed: r.u32() }));
}

describe('rnic_axi_mem: generated Verilog', () => {
  test.each([
    [8, {}],
    [64, {}],
    [8, SMALL],
  ] as const)('rnic_axi_mem_w%i %o is lint-clean under verilator -Wall, lines within the limit', (w, o) => {
    const m = rnicAxiMemModule(w, o);
    expect(m.name).toBe(axiMemName(w, o));
    expect(verilatorLint(m)).toBe('');
    const long = emitVerilog(m).split('\n').filter((l) => l.length > LINE_WIDTH);
    expect(long).toEqual([]);
  });

  test('options outside what AXI4 and the buffers allow are refused, naming the option', () => {
    expect(() => rnicAxiMemModule(64, { maxBurst: 128 })).toThrow(/maxBurst must be a power of two of at most 64/);
    expect(() => rnicAxiMemModule(8, { readBuffer: 16, maxBurst: 16 })).toThrow(/readBuffer/);
    expect(() => rnicAxiMemModule(8, { readQueue: 2 })).toThrow(/readQueue/);
  });
});

describe.each([
  ['rnic_axi_mem_w8', 8],
  ['rnic_axi_mem_w64', 64],
  [axiMemName(8, SMALL), 8],
] as const)('%s against the native ports, random pauses, out-of-order answers', (module, width) => {
  test('every write beat lands with its strobes, in order, as one of the bursts; every read returns in request order, after the writes before it', () => {
    const res = run(width, { width, module, runs: 200 });
    expect(res.firstMismatch).toBeNull();
    expect(res.violations).toEqual([]);
    expect(res.writeBeats).toBeGreaterThan(1000);
    expect(res.readBeats).toBeGreaterThan(1000);
    const small = module === axiMemName(8, SMALL);
    // Runs were coalesced into bursts up to the longest allowed, isolated beats went out alone
    // (the small adapter waits one cycle for a next beat: under these pauses its bursts are short).
    const lengths = [...res.stats.writeLengths.keys(), ...res.stats.readLengths.keys()];
    expect(Math.max(...lengths)).toBe(small ? SMALL.maxBurst : 16);
    expect(res.stats.writeLengths.get(1)).toBeGreaterThan(0);
    if (!small) expect(res.stats.writeBeats / res.stats.writeBursts).toBeGreaterThan(1.5);
    // The slave answered IDs out of order and interleaved their beats; several bursts were in flight.
    expect(res.stats.readOvertakes).toBeGreaterThan(20);
    expect(res.stats.readInterleaves).toBeGreaterThan(20);
    expect(res.stats.maxReadBurstsInFlight).toBeGreaterThan(2);
    expect(res.errors).toEqual({ injected: 0, counted: 0, valid: false, code: 0 });
  });
});

test('rnic_axi_mem_w8: failed responses are counted, beat for beat and burst for burst, and the first one is named; every access still completes', () => {
  const res = run(3, { width: 8, runs: 120, errorRate: 0.05 });
  expect(res.violations).toEqual([]);
  expect(res.errors.injected).toBeGreaterThan(10);
  expect(res.errors.counted).toBe(res.errors.injected);
  expect(res.errors.valid).toBe(true);
  expect([4, 5, 6, 7]).toContain(res.errors.code);
  // Failed reads carry the slave's garbage to the top: only data mismatches, no hang.
  expect(res.firstMismatch?.what ?? '').not.toMatch(/did not finish/);
});

describe('rnic_axi_mem: the checks see a broken adapter', () => {
  const cases = [
    ['a read issued before the write it must see is answered', (v: string) => v.replace(/assign rd_hazard = [^;]*;/, "assign rd_hazard = 1'b0;"), /read \d+ of/],
    ['an AR issued without room in the reorder buffer', (v: string) => v.replace(/assign rd_credit = [^;]*;/, "assign rd_credit = 1'b1;"), /read \d+ of/],
    ['WLAST a beat early', (v: string) => v.replace(/assign w_last = w_beat_reg == /, "assign w_last = w_beat_reg + 8'd1 == "), /wlast/],
    ['strobes dropped', (v: string) => v.replace(/assign m_axi_wstrb = [^;]*;/, (s) => s.replace(/= .*;/, "= {8{1'b1}};")), /.*/],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name, , pattern], i) => [name, mutants[i]!, pattern] as const))('%s', (_, mutate, pattern) => {
    const res = cosimAxiMem({ width: 8, seed: 11, runs: 150, module: axiMemName(8, SMALL), mutate });
    const problems = [res.firstMismatch?.what ?? '', ...res.violations].join('\n');
    expect(res.mismatches + res.violations.length, 'the mutant went unseen').toBeGreaterThan(0);
    expect(problems).toMatch(pattern);
  });
});

test.each([8, 64])('rnic_axi_mem_w%i with nothing pausing: one write beat and one read beat per cycle, in bursts of 16', (width) => {
  const r = axiMemRate(width, { beats: 1024, latency: 4 });
  expect(r.writeBeatsPerCycle).toBe(1);
  expect(r.readBeatsPerCycle).toBe(1);
  expect([...r.write.writeLengths]).toEqual([[16, 64]]);
  expect([...r.read.readLengths]).toEqual([[16, 64]]);
});
