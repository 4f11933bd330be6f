import { execFile, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { MPA_RX_WIDTHS, mpaRxModule } from '../../hdl-gen/blocks/mpa-rx';
import { emitVerilog } from '../../hdl-gen/emit/verilog';
import { moduleSources } from '../../hdl-gen/gen/sources';
import { cosimMpaRx, type MpaRxCosimOptions, type MpaRxCosimResult } from '../../sim/cosim/mpa-rx';
import { SEED } from '../support/random';

const seedFor = (salt: number) => (SEED ^ Math.imul(salt, 0x9e3779b1)) >>> 0;

function run(opts: MpaRxCosimOptions): MpaRxCosimResult {
  const r = cosimMpaRx(opts);
  const replay = `replay: cosimMpaRx(${JSON.stringify(opts)}) (RNIC_SEED=${SEED})`;
  expect(r.firstMismatch, `${replay}\n${JSON.stringify(r.firstMismatch, null, 1)}`).toBeUndefined();
  expect(r.mismatches, replay).toBe(0);
  return r;
}

describe.each([4, 8, 16, 64])('mpa_rx_w%i against MpaDeframer', (width) => {
  test(
    'random streams with faults: good ULPDUs, the first failed FPDU and its code equal the model, nothing after it',
    () => {
      const r = run({ width, seed: seedFor(width), fpdus: 4000, faults: 0.02 });
      expect(r.fpdus).toBe(4000);
      expect(r.delivered).toBeGreaterThan(1000);
      expect(Object.keys(r.errorCodes).sort()).toEqual(['0x02 crc', '0x03 marker', '0x03 oversize']);
      expect(r.errorsChecked).toBeGreaterThan(20);
      // Every marker placement of spec/mpa.md §4.5 and zero-length ULPDUs went through.
      for (const [k, n] of Object.entries(r.coverage)) expect(n, `coverage ${k}`).toBeGreaterThan(0);
    },
  );
});

describe('throughput', () => {
  test.each([8, 64])(
    'w%i takes one input beat per cycle on MULPDU-sized FPDUs without back-pressure',
    (width) => {
      const r = run({ width, seed: seedFor(100 + width), fpdus: 200, sourcePause: 0, sinkPause: 0, sizes: 'large', segments: 'full' });
      expect(r.inputBeatsPerCycle).toBeGreaterThan(0.98);
    },
  );
});

test(
  'the comparison can fail: a wrong CRC residue in the Verilog is caught',
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'mpa-rx-rtl-'));
    const src = moduleSources('mpa_rx_w8');
    const v = readFileSync(src.sources[0]!, 'utf8');
    // The check compares the CRC component's register with the residue advanced by the last
    // beat's word count (lib/crc.ts, 'check'): every one of those constants off by a bit.
    const check = 'crc_crc_reg == crc_expect_reg';
    expect(v).toContain(check);
    writeFileSync(join(dir, 'mpa_rx_w8.v'), v.replace(check, "crc_crc_reg == (crc_expect_reg ^ 32'h1)"));
    writeFileSync(join(dir, 'rnic.f'), 'mpa_rx_w8.v\n');
    const r = cosimMpaRx({ width: 8, seed: seedFor(7), fpdus: 300, rtlDir: dir });
    expect(r.rtl).toBe(dir);
    expect(r.mismatches).toBeGreaterThan(0);
    expect(r.firstMismatch?.config.crc).toBe(true);
    rmSync(dir, { recursive: true });
  },
);

// --- verilator -Wall and yosys -------------------------------------------------------------------

interface ToolRun {
  readonly code: number;
  readonly output: string;
}

const lintRoot = mkdtempSync(join(tmpdir(), 'mpa-rx-lint-'));
afterAll(() => rmSync(lintRoot, { recursive: true, force: true }));
const tools = new Map<string, Promise<ToolRun>>();

function tool(cmd: string, args: readonly string[], cwd: string): Promise<ToolRun> {
  return new Promise((resolve) => {
    execFile(cmd, args as string[], { cwd, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}${err && code === -1 ? String(err) : ''}` });
    });
  });
}

beforeAll(() => {
  for (const w of MPA_RX_WIDTHS) {
    const m = mpaRxModule(w);
    const dir = join(lintRoot, m.name);
    mkdirSync(dir);
    writeFileSync(join(dir, `${m.name}.v`), emitVerilog(m));
    tools.set(`lint ${w}`, tool('verilator', ['--lint-only', '-Wall', '--top-module', m.name, `${m.name}.v`], dir));
    if (w === 8) {
      const script = [`read_verilog ${m.name}.v`, `synth -top ${m.name}`, 'select -assert-none t:$_DLATCH* t:$dlatch* t:$adlatch'].join('; ');
      tools.set('synth 8', tool('yosys', ['-q', '-p', script], dir));
    }
  }
});

describe.each([...MPA_RX_WIDTHS])('mpa_rx_w%i Verilog', (width) => {
  test('verilator --lint-only -Wall prints nothing', async () => {
    const r = await tools.get(`lint ${width}`)!;
    expect(r.output.trim()).toBe('');
    expect(r.code).toBe(0);
  });
});

test(
  'yosys synth accepts mpa_rx_w8 with no latch',
  async () => {
    const r = await tools.get('synth 8')!;
    expect(r.output).not.toMatch(/ERROR/);
    expect(r.code, r.output).toBe(0);
  },
);

describe('mpa_rx against the cost model', () => {
  test.each([8, 64])(
    'at full rate, one FPDU per segment, every FPDU takes the input cycles the model predicts (%i octets)',
    (width) => {
      const r = cosimMpaRx({ width, seed: 3, fpdus: 300, sourcePause: 0, sinkPause: 0, segments: 'fpdu' });
      expect(r.mismatches).toBe(0);
      expect(r.cycleCheck).not.toBeNull();
      expect(r.cycleCheck!.fpdus).toBeGreaterThan(250);
      expect(r.cycleCheck!.within5Percent).toBe(r.cycleCheck!.fpdus);
    },
    300_000,
  );
});

describe('rnic cosim --dut mpa', () => {
  test(
    '--faults: TX and RX against the model, with payloadBytes, efficiency, bound and both cycle checks',
    () => {
      const root = new URL('../../', import.meta.url).pathname;
      const p = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--dut', 'mpa', '--width', '8', '--frames', '300', '--faults', '0.03', '--seed', '4', '--json'], { cwd: root, encoding: 'utf8' });
      expect(p.status, p.stderr).toBe(0);
      const r = JSON.parse(p.stdout);
      expect(r).toMatchObject({ dut: 'mpa', width: 8, seed: 4, frames: 300, faults: 0.03, mismatches: 0 });
      expect(r.payloadBytes).toBeGreaterThan(0);
      expect(r.efficiency / r.bound).toBeGreaterThan(0.99);
      expect(r.tx.cycleCheck.within5Percent).toBe(r.tx.cycleCheck.fpdus);
      expect(r.rx.cycleCheck.within5Percent).toBe(r.rx.cycleCheck.fpdus);
      expect(r.rx.errorsChecked).toBeGreaterThan(0);
    },
    300_000,
  );
});
