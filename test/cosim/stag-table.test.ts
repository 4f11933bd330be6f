import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { STAG_FAULTS, STAG_INV_FAULTS, STAG_TABLE_LATENCY, stagTableInitCycles, stagTableModule } from '../../hdl-gen/blocks/stag-table';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { DEFAULT_RESET_CYCLES } from '../../sim/cocotb/testbench';
import { formatStagTable } from '../../sim/cosim/block-reports';
import { cosimStagTable } from '../../sim/cosim/stag-table';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { SEED } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

/**
 * stag_table_d<depth> (hdl-gen/blocks/stag-table.ts) in Verilator against the model's StagTable:
 * seeded random config writes / re-registrations / invalidations by config / Sends with
 * Invalidate / lookups aimed at every fault, every response compared (sim/cosim/stag-table.ts);
 * the config port's cfg_ready compared in every cycle with its contract (the init sweep after
 * each reset, the cycle two after an invalidate), config writes held until taken, and lookups and
 * invalidates during the sweeps aimed at the entries valid before the reset.
 * Measured on 2 CPUs: a Verilator build ~7 s per depth, each run < 1 s; yosys synth at depth 16 ~2 s.
 */

const OPERATIONS = 20_000;

const LOOKUP_SCENARIOS = ['random', 'unregistered', 'above', 'wrong-key', 'invalidated', 'wrong-pd', 'no-right', 'wrap', 'bounds-edge', 'zero-length', 'inside', 'follow-up'];
const INV_SCENARIOS = ['valid', 'wrong-pd', 'wrong-key', 'invalid', 'unregistered', 'above', 'again'];

describe.each([16, 256, 4096, 65536])('stag_table_d%i against the model (StagTable)', (depth) => {
  test(
    'every lookup and invalidate response equals the model, every fault seen',
    () => {
      const seed = (SEED ^ Math.imul(depth, 0x9e3779b1)) >>> 0;
      const r = cosimStagTable({ depth, seed, operations: OPERATIONS });
      expect(r.firstMismatch, `replay: cosimStagTable({ depth: ${depth}, seed: ${seed}, operations: ${OPERATIONS} })`).toBeUndefined();
      expect(r.mismatches).toBe(0);
      expect(r.latency).toBe(STAG_TABLE_LATENCY);
      expect(r.lookups + r.invalidates + r.configs).toBeGreaterThanOrEqual(OPERATIONS);
      for (const f of STAG_FAULTS) expect(r.faultsSeen[f], `lookup outcome ${f}`).toBeGreaterThan(50);
      for (const f of STAG_INV_FAULTS) expect(r.faultsSeen[`inv:${f}`], `invalidate outcome ${f}`).toBeGreaterThan(50);
      for (const s of LOOKUP_SCENARIOS) expect(r.scenarios[`lookup:${s}`], `lookup scenario ${s}`).toBeGreaterThan(100);
      for (const s of INV_SCENARIOS) expect(r.scenarios[`inv:${s}`], `invalidate scenario ${s}`).toBeGreaterThan(20);
      expect(r.scenarios['cfg:collision']).toBeGreaterThan(100);
      // Write arbitration: config writes held by an invalidate's clear, and through the sweeps.
      expect(r.scenarios['cfg:held-by-inv']).toBeGreaterThan(100);
      expect(r.configsHeld).toBeGreaterThan(r.scenarios['cfg:held-by-inv']!);
      // Two sweeps (the first reset's and the one in the middle), each stagTableInitCycles(depth) long.
      expect(r.cycles).toBeGreaterThan(2 * stagTableInitCycles(depth));
      if (depth >= 256) {
        expect(r.scenarios['lookup:sweep'], 'lookups of entries valid before the reset, during the sweep').toBeGreaterThan(20);
        expect(r.scenarios['inv:sweep'], 'invalidates of entries valid before the reset, during the sweep').toBeGreaterThan(5);
      }
    },
  );
});

describe('stag_table ordering checks have teeth', () => {
  const FORWARD_COMMIT = ' | (lk1_behind_inv_reg & iv2_commit_reg)';
  /** `edit` applied to the Verilog, which must change it. */
  const mutation = (edit: (v: string) => string) => (v: string) => {
    const out = edit(v);
    if (out === v) throw new Error('mutation site not found');
    return out;
  };
  // One schemata build per DUT for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const [forwardCommitDropped, clearAtReadDropped, clearOverWrite, initSweepDropped, cfgReadyIgnoresInvalidate] = mutantGroup([
    mutation((v) => v.split(FORWARD_COMMIT).join('')),
    mutation((v) => v.split('(iv2_cleared_reg & (iv2_index_reg == lk_index)) | ').join('')),
    mutation((v) => v.replace(/inv_clear = inv_commit & [^;]*;/, 'inv_clear = inv_commit;')),
    mutation((v) => v.split(' | init_read_untrusted_reg').join('')),
    mutation((v) => v.replace(/(cfg_ready_q_next = [^;]*) \| inv_valid_q_reg\);/, '$1);')),
  ]);

  test(
    'without forwarding the commit of the invalidate ahead, lookups of the next cycle mismatch',
    () => {
      const r = cosimStagTable({ depth: 16, seed: 3, operations: 10_000, mutate: forwardCommitDropped });
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch!.what).toBe('lookup');
    },
  );

  // The clear of an invalidated entry is written at the edge its checks end: a request that read
  // the RAM at that edge missed it (it is forwarded), and a config write of that entry taken a
  // cycle after the invalidate wins over it.
  test.each([
    ['without forwarding the clear that landed at the read edge, lookups two cycles on mismatch', clearAtReadDropped],
    ['a clear that lands over a config write of the cycle after the invalidate mismatches', clearOverWrite],
  ])('%s', (_what, mutate) => {
    expect(cosimStagTable({ depth: 16, seed: 3, operations: 10_000, mutate }).mismatches).toBeGreaterThan(0);
  });

  test(
    'without the init sweep answering invalid-stag, lookups of entries valid before the reset mismatch',
    () => {
      const r = cosimStagTable({ depth: 256, seed: 3, operations: 10_000, mutate: initSweepDropped });
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch!.request).toMatch(/^sweep: /);
    },
  );

  test(
    'cfg_ready that ignores the invalidate in its checks (a config write and a clear in one cycle) is caught',
    () => {
      const r = cosimStagTable({ depth: 16, seed: 3, operations: 3000, mutate: cfgReadyIgnoresInvalidate });
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch!.what).toBe('cfg_ready');
    },
  );

  test(
    'the first mismatch names the cycle its response came out: its slot, STAG_TABLE_LATENCY cycles on',
    () => {
      const r = cosimStagTable({ depth: 16, seed: 3, operations: 3000, mutate: forwardCommitDropped });
      const m = r.firstMismatch!;
      // Slot k is driven in the cycle after the reset's and k more; its response is sampled
      // STAG_TABLE_LATENCY edges after that one.
      expect(m.cycle).toBe(DEFAULT_RESET_CYCLES + m.slot + STAG_TABLE_LATENCY + 1);
      expect(formatStagTable(r)).toContain(`first mismatch at cycle ${m.cycle}: `);
    },
  );
});

describe('stag_table Verilog', () => {
  test('depth must be a power of two from 16 to 65536', () => {
    for (const d of [8, 100, 131072, 0]) expect(() => stagTableModule(d)).toThrow(RangeError);
    const m = stagTableModule(256);
    expect(m.name).toBe('stag_table_d256');
    const width = Object.fromEntries(m.ports.map((p) => [p.name, p.width]));
    expect(width).toMatchObject({
      cfg_valid: 1, cfg_ready: 1, cfg_index: 8, cfg_key: 8, cfg_pd: 16, cfg_base: 64, cfg_length: 64, cfg_access: 5, cfg_va: 1, cfg_invalidatable: 1, cfg_enable: 1,
      lk_stag: 32, lk_to: 64, lk_len: 32, lk_pd: 16, lk_right: 5, rsp_valid: 1, rsp_fault: 3, rsp_address: 64,
      inv_stag: 32, inv_pd: 16, inv_rsp_valid: 1, inv_fault: 2,
    });
  });

  test('no per-entry flip-flop: the register bits grow with the index width only (16 to 65536 entries)', () => {
    const regBits = (depth: number) => stagTableModule(depth).signals.filter((x) => x.role === 'reg').reduce((n, x) => n + x.width, 0);
    // Every aw-wide register (indices, the sweep counter) grows by 12 bits from 16 to 65536 entries.
    expect(regBits(65536) - regBits(16)).toBeLessThan(12 * 8);
  });

  test.each([16, 256, 4096, 65536])(
    'stag_table_d%i is lint-clean under verilator -Wall',
    (depth) => expect(verilatorLint(stagTableModule(depth))).toBe(''),
    60_000,
  );

  test(
    'stag_table_d16 synthesizes in yosys with no latch',
    () => expect(yosysSynthNoLatch(stagTableModule(16))).toMatch(/Number of cells/),
    120_000,
  );

  test(
    'stag_table_d256: yosys infers both memories as RAM with registered (clocked) read ports, the valid bits in meta',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'stag-table-'));
      const file = join(dir, 'stag_table_d256.v');
      writeFileSync(file, emitVerilog(stagTableModule(256)));
      const dump = join(dir, 'mem.il');
      execFileSync('yosys', ['-q', '-p', `read_verilog ${file}; hierarchy -top stag_table_d256; proc; opt; memory -nomap; opt_clean; select -assert-count 2 t:$mem_v2; tee -q -o ${dump} dump t:$mem_v2`], { encoding: 'utf8' });
      const il = execFileSync('cat', [dump], { encoding: 'utf8' });
      const mems = il.split(/\n\s*cell \$mem_v2 /).slice(1);
      const param = (text: string, name: string) => new RegExp(`parameter \\\\${name} (\\S+)`).exec(text)?.[1];
      const byName = Object.fromEntries(mems.map((t) => [t.split('\n')[0]!.trim(), t]));
      expect(Object.keys(byName).sort()).toEqual(['\\meta_mem', '\\range_mem']);
      expect(param(byName['\\meta_mem']!, 'RD_PORTS')).toBe('2');
      expect(param(byName['\\range_mem']!, 'RD_PORTS')).toBe('1');
      for (const t of mems) {
        expect(param(t, 'SIZE')).toBe('256');
        expect(param(t, 'WR_PORTS')).toBe('1');
        // Every read port clocked (bit strings like 2'11).
        expect(param(t, 'RD_CLK_ENABLE')).toMatch(/^\d+'1+$/);
      }
      rmSync(dir, { recursive: true });
    },
    120_000,
  );
});

describe('rnic cosim --dut stag_table', () => {
  const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'stag_table', ...args], { encoding: 'utf8' });

  test('runs the seeded workload on the committed rtl/ (the default stagDepth) and exits 0', () => {
    const p = rnic('--depth', String(DEFAULT_CONFIG.stagDepth), '--frames', '3000', '--seed', '7', '--rtl', 'rtl', '--json');
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout) as { module: string; mismatches: number; lookups: number; faultsSeen: Record<string, number> };
    expect([r.module, r.mismatches]).toEqual([`stag_table_d${DEFAULT_CONFIG.stagDepth}`, 0]);
    expect(r.lookups).toBeGreaterThan(1000);
    expect(r.faultsSeen['bounds']).toBeGreaterThan(0);
  });

  test('a bad --depth exits 2 and names the option', () => {
    const p = rnic('--depth', '100');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/--depth must be a power of two from 16 to 65536, got 100/);
  });
});
