import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { mpaTxModule } from '../../hdl-gen/blocks/mpa-tx';
import { MPA_TX_ULPDU } from '../../hdl-gen/blocks/records';
import { moduleSources } from '../../hdl-gen/gen/sources';
import { cosimMpaTx } from '../../sim/cosim/mpa-tx';
import { Testbench } from '../../sim/cocotb/testbench';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { SEED } from '../support/random';
import { verilatorLint, yosysSynthNoLatch } from '../support/rtl-checks';

const SETTINGS = [
  { markers: true, crc: true },
  { markers: true, crc: false },
  { markers: false, crc: true },
  { markers: false, crc: false },
];

describe.each([4, 8, 16, 64])('mpa_tx_w%i against the model (MpaFramer)', (width) => {
  test.each(SETTINGS)(
    'every FPDU octet for octet, markers $markers, CRC $crc, random S0 and back-pressure',
    ({ markers, crc }) => {
      const seed = (SEED ^ (width * 7919) ^ (markers ? 1 : 0) ^ (crc ? 2 : 0)) >>> 0;
      const r = cosimMpaTx({ width, seed, fpdus: 1000, markers, crc });
      expect(r.firstMismatch, `replay: cosimMpaTx({ width: ${width}, seed: ${seed}, fpdus: 1000, markers: ${markers}, crc: ${crc} })`).toBeUndefined();
      expect(r.mismatches).toBe(0);
    },
  );
});

// The random runs above keep ULPDUs under 16 KiB: ULPDU_Length's top bits get their own runs.
describe.each([8, 64])('mpa_tx_w%i against the model: ULPDUs of 16 KiB and more', (width) => {
  test.each([
    [16384, true],
    [32768, true],
    [49151, true],
    [64000, true],
    [65535, false],
  ])('ULPDU_Length %i, markers %s, CRC on', (ulpduLength, markers) => {
    const r = cosimMpaTx({ width, seed: (SEED ^ ulpduLength) >>> 0, fpdus: 3, ulpduLength, markers, crc: true });
    expect(r.firstMismatch, `replay: cosimMpaTx({ width: ${width}, seed: ${(SEED ^ ulpduLength) >>> 0}, fpdus: 3, ulpduLength: ${ulpduLength}, markers: ${markers}, crc: true })`).toBeUndefined();
    expect([r.mismatches, r.fpdus]).toEqual([0, 3]);
  });
});

describe.each([8, 64])('mpa_tx_w%i_q4, shared by 4 QPs, against a framer per QP', (width) => {
  test(
    'ULPDUs of random QPs back to back, alternating, a short one of another QP between two of one QP, new connections: every FPDU and its tid',
    () => {
      const seed = (SEED ^ (width * 104729)) >>> 0;
      const r = cosimMpaTx({ width, seed, fpdus: 2000, qps: 4, restarts: 0.05 });
      expect(r.firstMismatch, `replay: cosimMpaTx({ width: ${width}, seed: ${seed}, fpdus: 2000, qps: 4, restarts: 0.05 })`).toBeUndefined();
      expect([r.module, r.mismatches]).toEqual([`mpa_tx_w${width}_q4`, 0]);
      expect(r.restarts).toBeGreaterThan(50);
    },
  );
});

describe('mpa_tx: a new connection loaded while the old one\'s FPDUs are still in the block', () => {
  test.each([
    [8, 1],
    [64, 1],
    [8, 4],
  ])('mpa_tx_w%i with %i QP(s): each FPDU framed by its own connection', (width, qps) => {
    const seed = (SEED ^ (width * 31) ^ qps) >>> 0;
    const r = cosimMpaTx({ width, seed, fpdus: 800, qps, restarts: 0.2 });
    expect(r.firstMismatch, `replay: cosimMpaTx({ width: ${width}, seed: ${seed}, fpdus: 800, qps: ${qps}, restarts: 0.2 })`).toBeUndefined();
    expect(r.mismatches).toBe(0);
    expect(r.restarts).toBeGreaterThan(100);
  });
});

// One width is enough for the mutants (a model build each).
describe('mpa_tx_w8_q4: the checks catch a broken context memory or first-beat lane keep', () => {
  const seed = (SEED ^ (8 * 104729)) >>> 0;
  const mutant = (site: RegExp, replacement: string) => (v: string) => {
    const out = v.replace(site, replacement);
    if (out === v) throw new Error(`mutation site not found: ${site}`);
    return out;
  };
  const cases = [
    ["a lookup that misses the context written back in the same cycle (no forwarding) frames the QP's next FPDU wrong", /assign tx_ctx_value = .*;/, 'assign tx_ctx_value = tx_ctx_rd_data_reg;', 0],
    ['an FPDU that never writes its marker distance back (every FPDU starts where the connection did)', /assign tx_ctx_write_back = .*;/, "assign tx_ctx_write_back = 1'b0;", 0],
    ["a context looked up by the QP before (another QP's S0 and settings)", /tx_ctx_rd_data_next = tx_ctx_mem\[s_axis_tid\];/, 'tx_ctx_rd_data_next = tx_ctx_mem[a_qp_reg];', 0],
    ["an old connection's FPDU that writes back after the new connection is loaded", /assign tx_ctx_write_back = .*;/, 'assign tx_ctx_write_back = b1_go & fb_last_reg;', 0.05],
    ['a write-back in the cycle of a configuration (no hold in B1): one of them is lost', /assign b1_free = .*;/, 'assign b1_free = mb_free;', 0.05],
    ['a first beat that keeps too few lanes when ULPDU_Length is 16 KiB or more', /in_ulpdu_length\[14\] \| in_ulpdu_length\[15\]/, 'in_ulpdu_length[14] & in_ulpdu_length[15]', 0, 16384],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, site, replacement]) => mutant(site, replacement)));
  test.each(cases.map(([name, , , restarts, ulpduLength], i) => [name, mutants[i]!, restarts, ulpduLength] as const))('%s', (_, mutate, restarts, ulpduLength) => {
    const r = cosimMpaTx({ seed, width: 8, fpdus: ulpduLength ? 20 : 2000, qps: 4, markers: true, restarts, mutate, ...(ulpduLength && { ulpduLength }) });
    expect(r.mismatches).toBeGreaterThan(0);
  });
});

describe('mpa_tx at full rate (exact Verilator cycle counts)', () => {
  test.each([8, 64])(
    '4 KiB ULPDUs with markers and CRC at %i octets: at least 99 percent of the overhead bound',
    (width) => {
      const r = cosimMpaTx({ width, seed: 5, fpdus: 100, ulpduLength: 4096, markers: true, crc: true, sourcePause: 0, sinkPause: 0 });
      expect(r.mismatches).toBe(0);
      expect(r.efficiency / r.bound).toBeGreaterThanOrEqual(0.99);
    },
  );

  test.each([8, 64])(
    'every FPDU takes the cycles the cost model predicts (%i octets, random sizes)',
    (width) => {
      const r = cosimMpaTx({ width, seed: 11, fpdus: 300, markers: true, crc: true, sourcePause: 0, sinkPause: 0 });
      expect(r.mismatches).toBe(0);
      expect(r.cycleCheck.fpdus).toBe(299);
      expect(r.cycleCheck.within5Percent).toBe(r.cycleCheck.fpdus);
    },
  );

  test('S0 just below 2^32 and every marker place (leading, after the header, inside, before the CRC)', () => {
    // Many small FPDUs at the wrap: their ends fall on every 4-aligned phase.
    const r = cosimMpaTx({ width: 8, seed: 77, fpdus: 600, markers: true, crc: true });
    expect(r.mismatches).toBe(0);
    expect(r.coverage.leading).toBeGreaterThan(0);
    expect(r.coverage.afterHeader).toBeGreaterThan(0);
    expect(r.coverage.inside).toBeGreaterThan(0);
    expect(r.coverage.beforeCrc).toBeGreaterThan(0);
  });
});

describe('mpa_tx Verilog', () => {
  test.each([4, 8, 16, 32, 64])(
    'mpa_tx_w%i is lint-clean under verilator -Wall',
    (width) => expect(verilatorLint(mpaTxModule(width))).toBe(''),
    60_000,
  );

  test(
    'mpa_tx_w8 synthesizes in yosys with no latch',
    () => expect(yosysSynthNoLatch(mpaTxModule(8))).toMatch(/Number of cells/),
    120_000,
  );
});

describe('rnic cosim --dut mpa_tx', () => {
  const ROOT = new URL('../../', import.meta.url).pathname;
  const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

  test(
    '--json reports the run, the full-rate efficiency against its bound and the cycle check',
    () => {
      const p = rnic('cosim', '--dut', 'mpa_tx', '--width', '8', '--frames', '150', '--seed', '6', '--json');
      expect(p.status, p.stderr).toBe(0);
      const r = JSON.parse(p.stdout);
      expect(r).toMatchObject({ dut: 'mpa_tx', width: 8, seed: 6, fpdus: 150, mismatches: 0 });
      expect(r.payloadBytes).toBeGreaterThan(0);
      expect(r.efficiency / r.bound).toBeGreaterThan(0.99);
      expect(r.cycleCheck.within5Percent).toBe(r.cycleCheck.fpdus);
    },
  );

  test(
    'a flipped bit in the committed mpa_tx (the one the top shares), passed through --rtl, is caught',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'mpa-tx-rtl-'));
      cpSync(join(ROOT, 'rtl'), dir, { recursive: true });
      const file = join(dir, `mpa_tx_w8_q${DEFAULT_CONFIG.qps}.v`);
      const v = readFileSync(file, 'utf8');
      const start = v.indexOf('assign c_crc_next =');
      expect(start).toBeGreaterThan(0);
      const at = v.indexOf("32'h", start) + 4;
      const end = v.slice(at).search(/[^0-9a-f]/) + at;
      writeFileSync(file, v.slice(0, at) + (BigInt('0x' + v.slice(at, end)) ^ 4n).toString(16) + v.slice(end));
      const p = rnic('cosim', '--dut', 'mpa_tx', '--width', '8', '--qps', String(DEFAULT_CONFIG.qps), '--frames', '50', '--seed', '2', '--rtl', dir, '--json');
      expect(p.status).toBe(1);
      const r = JSON.parse(p.stdout);
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch.firstDifference).toBeGreaterThan(0);
      rmSync(dir, { recursive: true });
    },
  );
});

describe('mpa_tx input checks', () => {
  test.each([
    ['ends before', 100, 50],
    ['runs past', 20, 60],
  ])(
    'a ULPDU that %s its ULPDU_Length raises err_length',
    (_, said, sent) => {
      const src = moduleSources('mpa_tx_w8');
      const model = SimModel.open(buildModel({ top: src.top, sources: [...src.sources], ports: src.ports.map((p) => ({ name: p.name, direction: p.direction, width: p.width })) }));
      const tb = new Testbench(model);
      const source = tb.source('s_axis');
      tb.sink('m_axis');
      const data = new Uint8Array(sent).fill(0xab);
      const beats = [];
      for (let at = 0; at < sent; at += 8) {
        const k = Math.min(8, sent - at);
        beats.push({ data: data.subarray(at, at + k), tkeep: (1n << BigInt(k)) - 1n, tlast: at + 8 >= sent, tuser: at === 0 ? MPA_TX_ULPDU.encode({ ulpdu_length: said }) : 0 });
      }
      source.sendBeats(beats);
      tb.reset();
      const errLength = model.handle('err_length');
      expect(model.peekNumber(errLength)).toBe(0);
      tb.run(100);
      expect(model.peekNumber(errLength)).toBe(1);
      tb.close();
    },
  );
});
