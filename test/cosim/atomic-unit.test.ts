import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { atomicUnitModule } from '../../hdl-gen/blocks/atomic-unit';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { AOpCode, u64ToBytes } from '../../ts-model/rdmap/atomics';
import {
  STATUS,
  compareAtomics,
  cosimAtomicUnit,
  expectAtomics,
  openAtomicUnit,
  runAtomicUnit,
  type AtomicOp,
  type WordMemory,
} from '../../sim/cosim/atomic-unit';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import type { SimModel } from '../../sim/verilator/model';
import { SEED, unhex } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const VECTORS = new URL('../../../shared/vectors/atomics.json', import.meta.url).pathname;

interface SemanticsEntry {
  readonly name: string;
  readonly op: string;
  readonly aopcode: string;
  readonly original?: string;
  readonly add_data?: string;
  readonly add_mask?: string;
  readonly compare_data?: string;
  readonly compare_mask?: string;
  readonly swap_data?: string;
  readonly swap_mask?: string;
  readonly match?: boolean;
  readonly new_memory?: string;
  readonly returned?: string;
  readonly translated_address?: string;
  readonly add_data_wire_hex?: string;
  readonly returned_wire_hex?: string;
  readonly memory_little_endian_before_hex?: string;
  readonly memory_little_endian_after_hex?: string;
  readonly memory_big_endian_before_hex?: string;
  readonly memory_big_endian_after_hex?: string;
}

const semantics = (JSON.parse(readFileSync(VECTORS, 'utf8')) as { semantics: SemanticsEntry[] }).semantics;
const big = (s: string | undefined): bigint => (s === undefined ? 0n : BigInt(s));
const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

let model: SimModel;
beforeAll(() => {
  model = openAtomicUnit();
});
afterAll(() => model?.close());

describe.each([false, true])('atomic_unit against ts-model/rdmap/atomics (cfg_big_endian %s)', (bigEndian) => {
  test('random FetchAdd/CmpSwap sequences with latency 0..5, back-pressure and gaps: every response and the final memory', () => {
    const seed = (SEED ^ (bigEndian ? 0xbe : 0x1e)) >>> 0;
    const r = cosimAtomicUnit({ seed, operations: 4000, bigEndian });
    const replay = `replay: cosimAtomicUnit({ seed: ${seed}, operations: 4000, bigEndian: ${bigEndian} })`;
    expect(r.firstMismatch, replay).toBeUndefined();
    expect(r.violations, replay).toEqual([]);
    expect(r.mismatches).toBe(0);
    expect(r.operations).toBe(4000);
    // The sequence exercised what it is meant to.
    const c = r.coverage;
    expect(c.fetchAdd).toBeGreaterThan(1000);
    expect(c.fetchAddCarryAcrossLane).toBeGreaterThan(100);
    expect(c.fetchAddWrap).toBeGreaterThan(20);
    expect(c.cmpSwapHit).toBeGreaterThan(300);
    expect(c.cmpSwapMiss).toBeGreaterThan(200);
    expect(c.misaligned).toBeGreaterThan(50);
    expect(c.unsupported).toBeGreaterThan(50);
    expect(c.sameAddressAsPrevious).toBeGreaterThan(500);
    expect(r.reads).toBe(c.fetchAdd + c.cmpSwapHit + c.cmpSwapMiss);
    expect(r.writes).toBe(c.fetchAdd + c.cmpSwapHit);
  });

  test('every "semantics" vector (FA*, CS*, SW1 unsupported, MA1 misaligned, E1 octets) through the RTL', () => {
    const endian = bigEndian ? 'big' : 'little';
    const memory: WordMemory = new Map();
    const ops: AtomicOp[] = [];
    const checks: { name: string; addr: bigint; returned: bigint; status: number; match: boolean; after: string }[] = [];
    semantics.forEach((v, i) => {
      const addr = 0x10000n + 8n * BigInt(i);
      const tag = 0x1000 + i;
      if (v.name.startsWith('E1')) {
        const before = bigEndian ? v.memory_big_endian_before_hex! : v.memory_little_endian_before_hex!;
        memory.set(addr, unhex(before));
        ops.push({ aopcode: AOpCode.FETCH_ADD, addr, addSwap: BigInt(`0x${v.add_data_wire_hex!}`), addSwapMask: 0n, compare: 0n, compareMask: 0n, tag });
        checks.push({ name: v.name, addr, returned: BigInt(`0x${v.returned_wire_hex!}`), status: STATUS.OK, match: false, after: bigEndian ? v.memory_big_endian_after_hex! : v.memory_little_endian_after_hex! });
        return;
      }
      if (v.name.startsWith('MA1')) {
        const target = big(v.translated_address);
        memory.set(target & ~7n, u64ToBytes(0x5555n, endian));
        ops.push({ aopcode: Number(v.aopcode), addr: target, addSwap: 1n, addSwapMask: 0n, compare: 0n, compareMask: 0n, tag });
        checks.push({ name: v.name, addr: target & ~7n, returned: 0n, status: STATUS.MISALIGNED, match: false, after: hex(u64ToBytes(0x5555n, endian)) });
        return;
      }
      const original = big(v.original);
      memory.set(addr, u64ToBytes(original, endian));
      if (v.op === 'FetchAdd') {
        ops.push({ aopcode: Number(v.aopcode), addr, addSwap: big(v.add_data), addSwapMask: big(v.add_mask), compare: 0n, compareMask: 0n, tag });
        checks.push({ name: v.name, addr, returned: big(v.returned), status: STATUS.OK, match: false, after: hex(u64ToBytes(big(v.new_memory), endian)) });
      } else if (v.op === 'CmpSwap') {
        ops.push({ aopcode: Number(v.aopcode), addr, addSwap: big(v.swap_data), addSwapMask: big(v.swap_mask), compare: big(v.compare_data), compareMask: big(v.compare_mask), tag });
        checks.push({ name: v.name, addr, returned: big(v.returned), status: STATUS.OK, match: v.match!, after: hex(u64ToBytes(big(v.new_memory), endian)) });
      } else {
        // SW1: AOpCode 0x1 is reserved in RFC 7306: unsupported, memory untouched.
        expect(v.op).toBe('Swap');
        ops.push({ aopcode: Number(v.aopcode), addr, addSwap: big(v.swap_data), addSwapMask: 0n, compare: 0n, compareMask: 0n, tag });
        checks.push({ name: v.name, addr, returned: 0n, status: STATUS.UNSUPPORTED, match: false, after: hex(u64ToBytes(original, endian)) });
      }
    });
    expect(checks.filter((c) => /^(FA|CS)/.test(c.name)).length).toBe(18);
    const expected = expectAtomics(ops, memory, endian);
    const run = runAtomicUnit({ ops, memory, bigEndian, seed: SEED ^ 0x7306, model });
    expect(compareAtomics(ops, expected, run, memory)).toEqual([]);
    checks.forEach((c, i) => {
      const rsp = run.responses[i]!;
      expect({ vector: c.name, tag: rsp.tag, orig: rsp.orig, status: rsp.status, match: rsp.match, memory: hex(memory.get(c.addr)!) }).toEqual({
        vector: c.name, tag: 0x1000 + i, orig: c.returned, status: c.status, match: c.match, memory: c.after,
      });
    });
    // Only the aligned, supported vectors touched memory.
    expect(run.reads.length).toBe(checks.filter((c) => c.status === STATUS.OK).length);
  });
});

describe('atomic_unit errors and timing', () => {
  test('misaligned targets and unsupported AOpCodes never read or write memory', () => {
    const ops: AtomicOp[] = [];
    for (let k = 1; k < 8; k++) ops.push({ aopcode: k & 1 ? AOpCode.FETCH_ADD : AOpCode.CMP_SWAP, addr: 0x2000n + BigInt(k), addSwap: 1n, addSwapMask: 0n, compare: 0n, compareMask: 0n, tag: k });
    for (const a of [1, 3, 4, 0xf]) ops.push({ aopcode: a, addr: 0x2000n, addSwap: 1n, addSwapMask: 0n, compare: 0n, compareMask: 0n, tag: 0x100 + a });
    // Unsupported wins over misaligned (A4 before A9).
    ops.push({ aopcode: 0x1, addr: 0x2003n, addSwap: 1n, addSwapMask: 0n, compare: 0n, compareMask: 0n, tag: 0x200 });
    const memory: WordMemory = new Map([[0x2000n, u64ToBytes(42n, 'little')]]);
    const run = runAtomicUnit({ ops, memory, bigEndian: false, seed: SEED, model });
    expect(run.reads).toEqual([]);
    expect(run.writes).toEqual([]);
    expect(run.violations).toEqual([]);
    expect(run.responses.map((r) => r.status)).toEqual([...Array(7).fill(STATUS.MISALIGNED), ...Array(5).fill(STATUS.UNSUPPORTED)]);
    expect(run.responses.map((r) => r.tag)).toEqual(ops.map((o) => o.tag));
    expect(hex(memory.get(0x2000n)!)).toBe(hex(u64ToBytes(42n, 'little')));
  });

  test('without back-pressure and with zero read latency: 4 cycles per FetchAdd, 3 per CmpSwap miss', () => {
    const n = 200;
    const fa: AtomicOp[] = Array.from({ length: n }, (_, i) => ({ aopcode: AOpCode.FETCH_ADD, addr: 0x3000n, addSwap: 1n, addSwapMask: 0n, compare: 0n, compareMask: 0n, tag: i }));
    const miss: AtomicOp[] = Array.from({ length: n }, (_, i) => ({ aopcode: AOpCode.CMP_SWAP, addr: 0x3000n, addSwap: 1n, addSwapMask: ~0n & 0xffffffffffffffffn, compare: 7n, compareMask: 0xffffffffffffffffn, tag: i }));
    const full = { reqGap: 0, rdPause: 0, wrPause: 0, rspPause: 0, maxLatency: 0, bigEndian: false, seed: 1, model };
    const a = runAtomicUnit({ ...full, ops: fa, memory: new Map() });
    const b = runAtomicUnit({ ...full, ops: miss, memory: new Map() });
    expect(a.responses.map((r) => r.orig)).toEqual(fa.map((_, i) => BigInt(i)));
    expect(b.responses.every((r) => !r.match)).toBe(true);
    // Each run also includes its 20 idle cycles at the end and the pipeline fill.
    expect(a.cycles - 20).toBeGreaterThanOrEqual(4 * n);
    expect(a.cycles - 20).toBeLessThanOrEqual(4 * n + 4);
    expect(b.cycles - 20).toBeLessThanOrEqual(3 * n + 4);
  });
});

describe('atomic_unit Verilog', () => {
  test('verilator --lint-only -Wall: no warnings', () => expect(verilatorLint(atomicUnitModule())).toBe(''), 60_000);

  test('yosys synth: no errors, no latches', () => expect(yosysSynthNoLatch(atomicUnitModule())).toMatch(/Number of cells/), 60_000);

  const cases = [
    ['a CmpSwap miss that writes back', (v: string) => v.replace('assign write_back = (~op_cmp_swap_reg) | cs_match_reg;', "assign write_back = 1'b1;")],
    ['no byte swap on the write path', (v: string) => v.replace(/op_wr_data_next = op_big_endian_reg \?\s*\{[^}]*\}\s*:\s*new_int;/, 'op_wr_data_next = new_int;')],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, mutate]) => mutate));
  test.each(cases.map(([name], i) => [name, mutants[i]!] as const))('the checks catch a broken RTL: %s', (_, mutate) => {
    const text = emitVerilog(atomicUnitModule());
    expect(mutate(text)).not.toBe(text);
    const r = cosimAtomicUnit({ seed: 3, operations: 300, bigEndian: true, mutate });
    expect(r.mismatches).toBeGreaterThan(0);
  });
});

describe('rnic cosim --dut atomic_unit', () => {
  const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'atomic_unit', ...args], { encoding: 'utf8' });

  test('runs the seeded workload on the committed rtl/ and exits 0 with no mismatch', () => {
    const p = rnic('--frames', '400', '--seed', '5', '--rtl', 'rtl', '--json');
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout) as { operations: number; mismatches: number; violations: string[]; coverage: Record<string, number> };
    expect([r.operations, r.mismatches, r.violations]).toEqual([400, 0, []]);
    expect(r.coverage['cmpSwapMiss']).toBeGreaterThan(0);
  });

  test('a broken RTL in --rtl exits 1 and prints the first mismatch and the replay command', () => {
    const dir = mkdtempSync(join(tmpdir(), 'atomic-rtl-'));
    // A CmpSwap miss writes back: the memory changes where it must not.
    const text = emitVerilog(atomicUnitModule());
    const broken = text.replace('assign write_back = (~op_cmp_swap_reg) | cs_match_reg;', "assign write_back = 1'b1;");
    expect(broken).not.toBe(text);
    writeFileSync(join(dir, 'atomic_unit.v'), broken);
    writeFileSync(join(dir, 'rnic.f'), 'atomic_unit.v\n');
    const p = rnic('--frames', '300', '--seed', '5', '--rtl', dir);
    rmSync(dir, { recursive: true });
    expect(p.status, p.stderr).toBe(1);
    expect(p.stdout).toMatch(/MISMATCH/);
    expect(p.stdout).toMatch(/first mismatch at cycle \d+: \{.*"cycle":\d+/);
    expect(p.stdout).toContain('replay: rnic cosim --dut atomic_unit --seed 5 --frames 300');
  });
});
