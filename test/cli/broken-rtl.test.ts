import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_BROKEN_RTL } from '../../hdl-gen/gen/rtl-error';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

/**
 * Broken RTL under --rtl is not a mismatch (exit 1) nor a usage error (2): exit 3 with a short
 * message naming the file and the line or port, and no stack trace. Every case fails before any
 * C++ is compiled (Verilator's parse and the port check come first), so these run in seconds.
 */
describe('rnic cosim --rtl with Verilog that cannot be used', () => {
  let good: string;
  const dirs: string[] = [];
  /** A copy of the generated RTL, edited. */
  const broken = (edit: (dir: string) => void): string => {
    const d = mkdtempSync(join(tmpdir(), 'rnic-broken-'));
    dirs.push(d);
    cpSync(good, d, { recursive: true });
    edit(d);
    return d;
  };
  const expectBroken = (p: ReturnType<typeof rnic>, ...patterns: RegExp[]) => {
    expect(p.status, p.stderr).toBe(EXIT_BROKEN_RTL);
    for (const re of patterns) expect(p.stderr).toMatch(re);
    expect(p.stderr).not.toMatch(/\n\s+at .+:\d+:\d+\)?\n/); // no stack frames
    expect(p.stderr.split('\n').length).toBeLessThan(12);
  };

  beforeAll(() => {
    good = mkdtempSync(join(tmpdir(), 'rnic-good-'));
    dirs.push(good);
    expect(rnic('gen', '--out', good).status).toBe(0);
  });
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  test('a syntax error: the file and the line Verilator names', () => {
    const d = broken((dir) => {
      const f = join(dir, 'crc32c_w8.v');
      const lines = readFileSync(f, 'utf8').split('\n');
      const at = lines.findIndex((l) => l.startsWith('assign '));
      lines[at] = `assign assign ${lines[at]!.slice(7)}`;
      writeFileSync(f, lines.join('\n'));
    });
    const f = join(d, 'crc32c_w8.v');
    const line = readFileSync(f, 'utf8').split('\n').findIndex((l) => l.startsWith('assign assign')) + 1;
    expectBroken(rnic('cosim', '--dut', 'crc32c', '--rtl', d, '--frames', '10'), new RegExp(`crc32c_w8\\.v:${line}: syntax error`));
  });

  test('a port that differs from manifest.json: the file, the module and the port', () => {
    const d = broken((dir) => {
      const f = join(dir, 'crc32c_w8.v');
      writeFileSync(f, readFileSync(f, 'utf8').replace(/input\s+wire \[63:0\] s_axis_tdata/, 'input  wire [31:0] s_axis_tdata'));
    });
    expectBroken(rnic('cosim', '--dut', 'crc32c', '--rtl', d, '--frames', '10'), /crc32c_w8\.v/, /manifest\.json/, /port s_axis_tdata is listed as 64 bits but the module declares 32/);
  });

  test('a file rnic.f names is missing: rnic.f, its line and the file', () => {
    const d = broken((dir) => unlinkSync(join(dir, 'crc32c_w8.v')));
    expectBroken(rnic('cosim', '--rtl', d, '--ops', '10'), /rnic\.f:\d+: names crc32c_w8\.v, which does not exist/);
  });

  test('no rnic.f, a manifest that is not JSON, no directory', () => {
    expectBroken(rnic('cosim', '--rtl', broken((dir) => unlinkSync(join(dir, 'rnic.f'))), '--ops', '10'), /rnic\.f: missing/);
    expectBroken(rnic('cosim', '--rtl', broken((dir) => writeFileSync(join(dir, 'manifest.json'), '{ nope')), '--ops', '10'), /manifest\.json: not valid JSON/);
    expectBroken(rnic('cosim', '--rtl', join(tmpdir(), 'rnic-no-such-dir'), '--ops', '10'), /rnic-no-such-dir: no such directory/);
  });

  test('rnic synth --rtl takes the same path', () => {
    const d = broken((dir) => unlinkSync(join(dir, 'rnic.f')));
    expectBroken(rnic('synth', '--module', 'crc32c_w8', '--rtl', d), /rnic\.f: missing/);
  });
});
