import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { formatSynth } from '../../cli/synth-cli';
import type { SynthResult } from '../../flow/synth';
import { crc32cModule, emitVerilog } from '../../hdl-gen/index';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

/** The register bits crc32c_w4's Verilog declares (`reg [N:0] x_reg;`): synthesis may only drop some. */
const declaredFfs = [...emitVerilog(crc32cModule(4)).matchAll(/^reg (?:\[(\d+):0\] )?\w+_reg;/gm)].reduce((n, m) => n + Number(m[1] ?? 0) + 1, 0);
/** At least the CRC loop register (32) and the registered output (32) survive any optimisation. */
const essentialFfs = 64;

describe('rnic synth', () => {
  test(
    'ice40: LUTs, flip-flops and an Fmax for the generated CRC block',
    () => {
      const p = rnic('synth', '--module', 'crc32c_w4', '--target', 'ice40', '--json');
      expect(p.status, p.stderr).toBe(0);
      const r = JSON.parse(p.stdout);
      expect(r).toMatchObject({ target: 'ice40', top: 'crc32c_w4', fits: true });
      expect(r.luts).toBeGreaterThan(100);
      expect(r.ffs).toBeGreaterThan(essentialFfs);
      expect(r.ffs).toBeLessThanOrEqual(declaredFfs);
      expect(r.fmaxMHz).toBeGreaterThan(20);
    },
    180_000,
  );

  test(
    'generic and xilinx: cell counts and logic depth, as text',
    () => {
      const g = rnic('synth', '--module', 'crc32c_w4', '--target', 'generic');
      expect(g.status, g.stderr).toBe(0);
      expect(g.stdout).toMatch(/cells\s+\d+/);
      expect(g.stdout).toMatch(/logic depth\s+\d+/);
      const x = JSON.parse(rnic('synth', '--module', 'crc32c_w4', '--target', 'xilinx', '--json').stdout);
      expect(x.luts).toBeGreaterThan(0);
      expect(x.ffs).toBeGreaterThan(essentialFfs);
      expect(x.ffs).toBeLessThanOrEqual(declaredFfs);
    },
    180_000,
  );

  test('bad arguments exit 2 with a message', () => {
    expect(rnic('synth').stderr).toMatch(/--module M is required/);
    expect(rnic('synth', '--module', 'crc32c_w4', '--target', 'asic').stderr).toMatch(/--target must be one of ice40, generic, xilinx/);
    const p = rnic('synth', '--module', 'nope', '--target', 'generic');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/no module 'nope'/);
  });
});

describe('rnic synth text output', () => {
  const base: SynthResult = {
    target: 'ice40',
    top: 'big',
    device: 'hx8k-ct256',
    cellTypes: { SB_LUT4: 9000, SB_RAM40_4K: 40 },
    luts: 9000,
    rams: 40,
    fmaxMHz: null,
    fits: false,
    utilisation: { ICESTORM_LC: { used: 9500, total: 7680 }, ICESTORM_RAM: { used: 40, total: 32 }, SB_IO: { used: 4, total: 256 } },
    notes: [],
    logDir: '/tmp/x',
    seconds: 1,
  };

  test('a module that does not fit says what it needs of what the part has', () => {
    const text = formatSynth(base);
    expect(text).toMatch(/^fits +no: needs 9500 of 7680 ICESTORM_LC, 40 of 32 ICESTORM_RAM on hx8k-ct256$/m);
    expect(text).toMatch(/^block RAMs +40 \(SB_RAM40_4K 40\)$/m);
    expect(text).toMatch(/^Fmax +not placed$/m);
  });

  test('a module that fits shows its use of logic cells and block RAMs; xilinx splits its RAM cells', () => {
    const fits = formatSynth({ ...base, fits: true, fmaxMHz: 61.5, utilisation: { ICESTORM_LC: { used: 500, total: 7680 }, ICESTORM_RAM: { used: 2, total: 32 } } });
    expect(fits).toMatch(/^fits +yes: 500 of 7680 ICESTORM_LC, 2 of 32 ICESTORM_RAM on hx8k-ct256$/m);
    expect(fits).toMatch(/^Fmax +61\.5 MHz$/m);
    const x = formatSynth({ target: 'xilinx', top: 'm', device: 'xc7', cellTypes: { RAMB18E1: 17, RAMB36E1: 2, RAM32M: 191 }, rams: 19, lutRams: 191, notes: [], logDir: '/tmp/x', seconds: 1 });
    expect(x).toMatch(/^block RAMs +19 \(RAMB18E1 17, RAMB36E1 2\)$/m);
    expect(x).toMatch(/^LUT RAMs +191 \(RAM32M 191\)$/m);
    expect(x).not.toMatch(/^fits/m);
  });
});
