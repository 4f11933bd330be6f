import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runDemo } from '../../cli/demo';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('rnic demo (the main job)', () => {
  test('frames the stream and gets every ULPDU back, markers and CRC on, across 2^32', () => {
    const r = runDemo();
    expect(r.connection.status).toBe('established');
    expect(r.connection.markers && r.connection.crc).toBe(true);
    expect(r.received).toMatchObject({ delivered: r.fpdus.length, matched: r.fpdus.length, errors: [] });
    const starts = r.fpdus.map((f) => Number(f.startSeq));
    expect(starts.some((s, i) => i > 0 && s < starts[i - 1]!)).toBe(true); // the sequence space wrapped
    expect(r.fpdus.flatMap((f) => f.markers).length).toBeGreaterThan(3);
  });

  test.each([
    { markers: false, crc: true },
    { markers: true, crc: false },
    { markers: false, crc: false },
  ])('works with markers $markers and CRC $crc', (cfg) => {
    const r = runDemo(cfg);
    expect(r.received.matched).toBe(r.fpdus.length);
    expect(r.fpdus.every((f) => f.markers.length === 0)).toBe(!cfg.markers);
  });

  test('the command prints JSON with --json and exits 0', () => {
    const p = rnic('demo', '--json', '--seed', '7');
    expect(p.status).toBe(0);
    const report = JSON.parse(p.stdout);
    expect(report.config.seed).toBe(7);
    expect(report.received.matched).toBe(report.fpdus.length);
  });

  test('a bad option value exits 2 with a message naming the field', () => {
    const p = rnic('demo', '--emss', '12');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/emss/);
  });

  test('an unknown command or flag exits 2', () => {
    expect(rnic('frobnicate').status).toBe(2);
    expect(rnic('demo', '--bogus').status).toBe(2);
    expect(rnic('--help').stdout).toMatch(/usage: rnic/);
  });
});
