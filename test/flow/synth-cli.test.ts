import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('rnic synth', () => {
  test(
    'ice40: LUTs, flip-flops and an Fmax for the generated CRC block',
    () => {
      const p = rnic('synth', '--module', 'crc32c_w4', '--target', 'ice40', '--json');
      expect(p.status, p.stderr).toBe(0);
      const r = JSON.parse(p.stdout);
      expect(r).toMatchObject({ target: 'ice40', top: 'crc32c_w4', fits: true });
      expect(r.luts).toBeGreaterThan(100);
      expect(r.ffs).toBe(67); // CRC register 32 + output 32 + valid + error + frame error
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
      expect(x.ffs).toBe(67);
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
