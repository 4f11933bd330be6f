import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { DEFAULT_RESET_CYCLES } from '../../sim/cocotb/testbench';
import { formatCrc } from '../../sim/cosim/block-reports';
import { cosimCrc32c } from '../../sim/cosim/crc32c';
import { SEED } from '../support/random';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

describe.each([4, 8, 16, 64])('crc32c_w%i against the model', (width) => {
  test(
    'every CRC of random frames with random tkeep and back-pressure equals the model',
    () => {
      // A run of seconds: its model is built -O0 (crc32c_w16: ~4 s against ~27 s at -O3), but for
      // width 8, whose -O3 model the CLI runs below use as well.
      const r = cosimCrc32c({ width, seed: SEED ^ width, frames: 1500, ...(width !== 8 && { optimize: 'build' as const }) });
      expect(r.firstMismatch, `replay: rnic cosim --dut crc32c --width ${width} --seed ${SEED ^ width} --frames 1500`).toBeUndefined();
      expect(r.mismatches).toBe(0);
      expect(r.frames).toBe(1500);
      expect(r.flaggedFrames).toBeGreaterThan(0); // non-contiguous tkeep comes back flagged
      expect(r.cycles).toBeGreaterThan(1500);
    },
  );
});

describe('rnic cosim --dut crc32c', () => {
  test(
    '--json prints the run as one object and exits 0',
    () => {
      const p = rnic('cosim', '--dut', 'crc32c', '--width', '8', '--seed', '3', '--frames', '300', '--json');
      expect(p.status, p.stderr).toBe(0);
      const r = JSON.parse(p.stdout);
      expect(r).toMatchObject({ dut: 'crc32c', width: 8, seed: 3, frames: 300, mismatches: 0 });
      expect(r.cycles).toBeGreaterThan(0);
      expect(r.simCyclesPerSecond).toBeGreaterThan(0);
      expect(r.firstMismatch).toBeUndefined();
    },
  );

  test('bad options exit 2 with a message; an --rtl directory without rnic.f exits 3', () => {
    expect(rnic('cosim', '--width', '12').stderr).toMatch(/--width must be one of/);
    expect(rnic('cosim', '--dut', 'nope').stderr).toMatch(/--dut must be one of/);
    const dir = mkdtempSync(join(tmpdir(), 'rnic-rtl-'));
    const p = rnic('cosim', '--rtl', dir);
    expect(p.status).toBe(3);
    expect(p.stderr).toMatch(/rnic\.f/);
    rmSync(dir, { recursive: true });
  });

  /** `v` with the lowest bit of the hex digits that start at `from` flipped. */
  const flipLowestBit = (v: string, from: number): string => {
    const end = v.slice(from).search(/[^0-9a-f]/) + from;
    return v.slice(0, from) + (BigInt('0x' + v.slice(from, end)) ^ 1n).toString(16) + v.slice(end);
  };

  /**
   * One term broken in the committed RTL (what a wrong hand edit or a broken tool would do): the
   * run must fail with the first differing frame. The first is checked through the CLI's --rtl
   * and its printed replay line (two -O3 builds: the mutant, and its replay with a VCD); the second
   * in-process (one -O0 build), since the --rtl path is the same for every edit.
   */
  const MUTANTS = [
    // The lowest bit of the first data-matrix row mask: one octet bit drops out of one XOR tree.
    ['the beat data matrix', 'crc_s2_data_partials_next = {', (v: string, at: number) => flipLowestBit(v, v.indexOf("64'h", at) + 4)],
    // One bit of Z^2's top row (the matrix that skips the octets a short beat lacks; the row is a
    // one-hot mux of constants, Z^0's first): the third constant's lowest bit flipped.
    ['the Z^k matrix of a short beat', 'crc_s1_zk_row31_next = (', (v: string, at: number) => {
      let from = at;
      for (let n = 0; n < 3; n++) from = v.indexOf("32'h", from) + 4;
      return flipLowestBit(v, from);
    }],
  ] as const;

  /** The committed crc32c_w8.v with mutant `i` applied (the line it edits must be there). */
  const mutant = (i: number, v: string): string => {
    const [, line, mutate] = MUTANTS[i]!;
    const start = v.indexOf(line);
    expect(start, line).toBeGreaterThan(0);
    return mutate(v, start);
  };

  test(
    `a broken term in ${MUTANTS[0][0]} is caught through --rtl, and its printed replay fails the same way`,
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'rnic-rtl-'));
      cpSync(join(ROOT, 'rtl'), dir, { recursive: true });
      const file = join(dir, 'crc32c_w8.v');
      writeFileSync(file, mutant(0, readFileSync(file, 'utf8')));
      const p = rnic('cosim', '--dut', 'crc32c', '--width', '8', '--frames', '400', '--seed', '11', '--rtl', dir, '--json');
      expect(p.status).toBe(1);
      const r = JSON.parse(p.stdout);
      expect(r.mismatches).toBeGreaterThan(0);
      expect(r.firstMismatch.expected).not.toBe(r.firstMismatch.actual);
      expect(r.rtl).toBe(dir);
      // The printed replay line, run as printed (from a scratch directory, for its VCD), fails the same way.
      expect(r.replay).toMatch(new RegExp(`--rtl ${dir}`));
      const [cmd, sub, ...args] = r.replay.split(' ');
      expect([cmd, sub]).toEqual(['rnic', 'cosim']);
      const again = spawnSync('node', [join(ROOT, 'bin/rnic.mjs'), sub, ...args, '--json'], { cwd: dir, encoding: 'utf8' });
      expect(again.status).toBe(1);
      const replayed = JSON.parse(again.stdout);
      expect(replayed.mismatches).toBe(r.mismatches);
      expect(replayed.firstMismatch).toEqual(r.firstMismatch);
      expect(existsSync(join(dir, 'crc32c.vcd'))).toBe(true);
      rmSync(dir, { recursive: true });
    },
  );

  test(`a broken term in ${MUTANTS[1][0]} is caught`, () => {
    // The same edit, of the generated crc32c_w8.v (what rtl/ holds), and the same run as above.
    const r = cosimCrc32c({ width: 8, seed: 11, frames: 400, mutate: (v) => mutant(1, v) });
    expect(r.frames).toBe(400);
    expect(r.mismatches).toBeGreaterThan(0);
    expect(r.firstMismatch).toBeDefined();
    expect(r.firstMismatch!.expected).not.toBe(r.firstMismatch!.actual);
  });

  test(
    '--vcd writes a waveform of the run',
    () => {
      const dir = mkdtempSync(join(tmpdir(), 'rnic-vcd-'));
      const vcd = join(dir, 'crc.vcd');
      const p = rnic('cosim', '--dut', 'crc32c', '--width', '4', '--frames', '20', '--vcd', vcd);
      expect(p.status, p.stderr).toBe(0);
      expect(existsSync(vcd)).toBe(true);
      const text = readFileSync(vcd, 'utf8');
      expect(text).toMatch(/\$var wire\s+32 \S+ m_axis_tdata/);
      rmSync(dir, { recursive: true });
    },
  );
});

describe('crc32c: a mismatch names the cycle of the first divergence', () => {
  /** The final XOR with all ones (RFC 3385 / iSCSI CRC-32C) off by one bit: every CRC out is wrong. */
  const flip = (v: string): string => {
    if (!v.includes("crc_crc_reg ^ 32'hffffffff")) throw new Error('mutation site not found');
    return v.replace("crc_crc_reg ^ 32'hffffffff", "crc_crc_reg ^ 32'hfffffffe");
  };

  test('the cycle the differing CRC came out, in the result and the text report', () => {
    const r = cosimCrc32c({ width: 8, seed: 11, frames: 400, mutate: flip });
    expect(r.mismatches).toBe(r.frames - r.flaggedFrames);
    const m = r.firstMismatch!;
    // After the reset and within the run; the frames before it came out earlier and matched.
    expect(m.cycle).toBeGreaterThan(DEFAULT_RESET_CYCLES + m.frame);
    expect(m.cycle).toBeLessThanOrEqual(DEFAULT_RESET_CYCLES + r.cycles);
    expect(formatCrc(r)).toContain(`first mismatch: frame ${m.frame} at cycle ${m.cycle} `);
  });
});
