import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { runDemo } from '../../cli/demo';
import { runScenario } from '../../ts-model/scenario/run';
import { CONNECTION_FAULTS, OP_FAULTS, OpSchema, parseScenario } from '../../ts-model/scenario/schema';

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

  test.each([
    ['demo', '--no-markers'],
    ['run', '--scenario'],
    ['pcap', '-o OUT.pcap'],
    ['schema', 'JSON Schema'],
    ['gen', '--out DIR'],
    ['cosim', '--dut D'],
    ['synth', 'ice40 | generic | xilinx'],
    ['bench', '--group G'],
  ])('rnic %s --help exits 0 with its options and the exit status, and runs nothing', (command, option) => {
    const p = rnic(command, '--help');
    expect(p.status).toBe(0);
    expect(p.stdout).toContain(`usage: rnic ${command} [options]`);
    expect(p.stdout).toContain(option);
    expect(p.stdout).toMatch(/exit status: 0 on success/);
    expect(p.stderr).toBe('');
  });

  test('rnic --version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const p = rnic(flag);
      expect(p.status).toBe(0);
      expect(p.stdout.trim()).toBe(`rnic ${pkg.version}`);
    }
  });

  test('the suite runs the bundle of the sources (test/support/cli-bundle.ts); without it, bin/rnic.mjs runs the sources through tsx', () => {
    expect(process.env.RNIC_CLI_BUNDLE).toMatch(/cli\.js$/);
    const { RNIC_CLI_BUNDLE: _, ...env } = process.env;
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const p = spawnSync('node', ['bin/rnic.mjs', '--version'], { cwd: ROOT, encoding: 'utf8', env });
    expect(p.status, p.stderr).toBe(0);
    expect(p.stdout.trim()).toBe(`rnic ${pkg.version}`);
    const bad = spawnSync('node', ['bin/rnic.mjs', 'cosim', '--width', '12'], { cwd: ROOT, encoding: 'utf8', env });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toBe(spawnSync('node', ['bin/rnic.mjs', 'cosim', '--width', '12'], { cwd: ROOT, encoding: 'utf8' }).stderr);
  });

  test('a configuration width that is not a datapath width lists the allowed ones', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rnic-cli-'));
    const f = join(dir, 'w12.json');
    writeFileSync(f, '{"width": 12}');
    const p = rnic('gen', '--config', f, '--out', join(dir, 'rtl'));
    expect(p.status).toBe(2);
    expect(p.stderr).toContain('width: must be one of 8, 16, 32, 64, got 12');
    rmSync(dir, { recursive: true });
  });
});

describe('rnic run / pcap / schema', () => {
  const tmp = () => mkdtempSync(join(tmpdir(), 'rnic-cli-'));

  test('run prints the events and summary of a scenario as JSON', () => {
    const p = rnic('run', '--scenario', 'examples/demo.json', '--json');
    expect(p.status, p.stderr).toBe(0);
    const r = JSON.parse(p.stdout);
    expect(r.connection.status).toBe('established');
    expect(r.summary.terminates).toEqual([]);
    expect(r.summary.fpdus).toBeGreaterThan(20);
    expect(r.memory.length).toBe(6);
    expect(r.events.some((e: { type: string }) => e.type === 'placement')).toBe(true);
  });

  test('a scenario with a bad field exits 2 and names the field', () => {
    const dir = tmp();
    const file = join(dir, 'bad.json');
    writeFileSync(file, JSON.stringify({ ops: [{ from: 'initiator', op: 'write', stag: 'zz', length: 4 }] }));
    const p = rnic('run', '--scenario', file);
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/ops\.0\.stag/);
    rmSync(dir, { recursive: true });
  });

  test('a missing file, bad JSON or a missing option exit 2 with a clear message', () => {
    const dir = tmp();
    const file = join(dir, 'broken.json');
    writeFileSync(file, '{ "seed": ');
    expect(rnic('run', '--scenario', join(dir, 'nope.json')).stderr).toMatch(/cannot read scenario/);
    expect(rnic('run', '--scenario', file).stderr).toMatch(/not valid JSON/);
    expect(rnic('run').stderr).toMatch(/--scenario F is required/);
    expect(rnic('pcap', '--scenario', 'examples/demo.json').stderr).toMatch(/-o OUT.pcap is required/);
    rmSync(dir, { recursive: true });
  });

  test('pcap writes a libpcap file of both directions', () => {
    const dir = tmp();
    const out = join(dir, 'demo.pcap');
    const p = rnic('pcap', '--scenario', 'examples/demo.json', '-o', out);
    expect(p.status, p.stderr).toBe(0);
    const bytes = readFileSync(out);
    expect(bytes.readUInt32LE(0)).toBe(0xa1b2c3d4);
    expect(bytes.readUInt32LE(20)).toBe(1); // LINKTYPE_ETHERNET
    rmSync(dir, { recursive: true });
  });

  test('schema prints the JSON Schema of scenario files', () => {
    const p = rnic('schema');
    expect(p.status).toBe(0);
    const schema = JSON.parse(p.stdout);
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['seed', 'connection', 'regions', 'receives', 'ops', 'faults']));
  });
});

describe('examples/', () => {
  const files = [
    ...readdirSync(join(ROOT, 'examples')).filter((f) => f.endsWith('.json')).map((f) => `examples/${f}`),
    ...readdirSync(join(ROOT, 'examples/faults')).map((f) => `examples/faults/${f}`),
  ];
  const scenarios = files.map((f) => parseScenario(JSON.parse(readFileSync(join(ROOT, f), 'utf8'))));

  test('together they use every op and every fault kind', () => {
    const ops = new Set(scenarios.flatMap((s) => s.ops.map((o) => o.op)));
    const kinds = new Set(scenarios.flatMap((s) => s.faults.map((f) => f.kind)));
    expect([...ops].sort()).toEqual(OpSchema.options.flatMap((o) => ('options' in o.shape.op ? o.shape.op.options : [o.shape.op.value])).filter((o) => o !== 'abort').sort());
    expect([...kinds].sort()).toEqual([...Object.keys(OP_FAULTS), ...Object.keys(CONNECTION_FAULTS)].sort());
  });

  test.each(files.filter((f) => !f.includes('/faults/')))('%s runs without an error', (f) => {
    const r = runScenario(scenarios[files.indexOf(f)]!);
    expect(r.summary.terminates).toEqual([]);
    expect(r.summary.flushed).toBe(0);
  });

  test.each(files.filter((f) => f.includes('/faults/')))('%s stops the stream with one error', (f) => {
    const r = runScenario(scenarios[files.indexOf(f)]!);
    const errors = r.events.filter((e) => e.type === 'terminate-sent' || (e.type === 'closed' && e.error));
    expect(errors.length).toBeGreaterThanOrEqual(1);
    expect(r.events.filter((e) => e.type === 'terminate-sent').length).toBeLessThanOrEqual(1);
  });
});

describe('rnic bench', () => {
  test('--json: one JSON line per figure, with the peer measured in the same run and the ratio', () => {
    // The CRC group only: the RTL group's figures are exact cycle counts, checked where they are
    // measured (test/cosim/rx.test.ts, mpa-tx.test.ts, ddp-rx-hdr.test.ts).
    const p = rnic('bench', '--group', 'crc', '--seconds', '0.2', '--json');
    expect(p.status, p.stderr).toBe(0);
    const figures = p.stdout.trim().split('\n').map((l) => JSON.parse(l) as { figure: string; unit: string; value: number; peer?: string; peerValue?: number; ratio?: number });
    expect(figures.length).toBeGreaterThan(1);
    for (const f of figures) expect(f.value).toBeGreaterThan(0);
    const vsAws = figures.find((f) => f.peer?.includes('aws-crypto'));
    expect(vsAws?.ratio).toBeCloseTo(vsAws!.value / vsAws!.peerValue!, 1);
  });

  test.each([
    [['--group', 'nope'], /--group must be one of e2e, crc, mpa, cosim, rtl, got 'nope'/],
    [['--seconds', 'x'], /--seconds must be a positive number of seconds, got 'x'/],
    [['--bogus'], /Unknown option '--bogus' \(it takes --group G, --seconds S, --json\)/],
  ])('%j is refused by name with exit status 2, no stack', (args, message) => {
    const p = rnic('bench', ...args);
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(message);
    expect(p.stderr).not.toMatch(/\n\s+at /);
  });
});
