import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { ZodError } from 'zod';
import { DEFAULT_CONFIG, RnicConfigSchema, configHash, generate, modulesFor, parseConfig, type Manifest, type RnicConfig } from '../../hdl-gen/index';
import { DATAPATH_WIDTHS } from '../../hdl-gen/gen/config';
import { GENERATOR_VERSION, writeGenerated } from '../../hdl-gen/gen/generate';
import { emitVerilog } from '../../hdl-gen/emit/verilog';

/**
 * `generate()` (what `rnic gen` / `make rtl` writes): the files, the manifest, the configuration
 * schema and hash, the CLI, and the committed rtl/ being up to date.
 */

const REPO = fileURLToPath(new URL('../../', import.meta.url));
const RTL = join(REPO, 'rtl');
const tmp = mkdtempSync(join(tmpdir(), 'hdl-gen-generate-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const asMap = (files: readonly { path: string; text: string }[]) => new Map(files.map((f) => [f.path, f.text]));
const manifestOf = (files: readonly { path: string; text: string }[]): Manifest => JSON.parse(asMap(files).get('manifest.json')!) as Manifest;
const config = (input: Partial<RnicConfig>): RnicConfig => parseConfig(input);
/** generate(c), once per configuration in this file (a 64-octet generation takes seconds). */
const memo = new Map<string, ReturnType<typeof generate>>();
const generated = (c: RnicConfig): ReturnType<typeof generate> => {
  const key = configHash(c);
  if (!memo.has(key)) memo.set(key, generate(c));
  return memo.get(key)!;
};

/** The ports a Verilog file declares: `input  wire [63:0] s_axis_tdata,` → {name, direction, width}. */
function verilogPorts(text: string): { name: string; direction: string; width: number }[] {
  const start = text.search(/^module /m);
  const header = text.slice(start, text.indexOf('\n);', start));
  return [...header.matchAll(/^\s+(input|output)\s+(?:wire|reg)\s+(?:\[(\d+):0\]\s+)?(\w+)/gm)].map((m) => ({
    name: m[3]!,
    direction: m[1]!,
    width: m[2] === undefined ? 1 : Number(m[2]) + 1,
  }));
}

describe('generate()', () => {
  test('the default configuration gives <module>.v for every module, rnic.f, manifest.json, the integrator\'s files and the register map', () => {
    const files = generated(DEFAULT_CONFIG);
    expect(files.map((f) => f.path)).toEqual([
      'crc32c_w8.v',
      'rnic_cfg_axil_w8_q1024_d4096.v',
      'ddp_rx_ctl_q1024.v',
      'atomic_unit.v',
      'rdmap_tx_resp_w8_q1024.v',
      'stag_table_d4096.v',
      'ddp_tx_w8_q1024.v',
      'mpa_rx_w8_q1024.v',
      'ulpdu_reasm_w8_q1024.v',
      'ddp_rx_hdr_w8.v',
      'ddp_rx_place_w8.v',
      'mpa_tx_w8_q1024.v',
      'rnic_top_w8.v',
      'rnic_top_axil_w8.v',
      'rnic.f',
      'manifest.json',
      'rnic.xdc',
      'rnic.sdc',
      'vivado.tcl',
      'quartus.qsf',
      'register-map.md',
      'register-map.json',
    ]);
  });

  test('is deterministic: the same configuration gives the same bytes, at every width', () => {
    for (const width of DATAPATH_WIDTHS) {
      // A fresh run from an equal (explicitly spelled) configuration gives the bytes of the run the
      // per-width checks below read.
      expect(generate(config({ width, stagDepth: DEFAULT_CONFIG.stagDepth }))).toEqual(generated(config({ width })));
    }
  });

  test.each(DATAPATH_WIDTHS.map((w) => [w]))('width %i: files, rnic.f and manifest agree with the modules', (width) => {
    const c = config({ width });
    const files = generated(c);
    const byPath = asMap(files);
    const modules = modulesFor(c);
    const manifest = manifestOf(files);

    // rnic.f: one relative path per line, children before parents, every .v file and only those.
    const list = byPath.get('rnic.f')!;
    expect(list.endsWith('\n')).toBe(true);
    const entries = list.trimEnd().split('\n');
    expect(entries).toEqual(modules.map((m) => `${m.name}.v`));
    for (const e of entries) {
      expect(e).not.toMatch(/^[/\\]|^[A-Za-z]:|\.\.|\//);
      expect(byPath.has(e)).toBe(true);
    }
    expect([...byPath.keys()].filter((p) => p.endsWith('.v')).sort()).toEqual([...entries].sort());
    expect(entries).toContain(`crc32c_w${width}.v`);

    // manifest.json
    expect(manifest.generator).toBe('hdl-gen');
    expect(manifest.version).toBe(GENERATOR_VERSION);
    expect(manifest.configHash).toBe(configHash(c));
    expect(manifest.config).toEqual(c);
    expect(manifest.top).toBe(modules[modules.length - 1]!.name);
    expect(manifest.modules.map((m) => m.name)).toEqual(modules.map((m) => m.name));
    for (const [i, info] of manifest.modules.entries()) {
      const m = modules[i]!;
      expect(info.file).toBe(`${m.name}.v`);
      expect(info.params).toEqual(m.params);
      expect(info.ports).toEqual(
        m.ports.map((p) => ({
          name: p.name,
          direction: p.role,
          width: p.width,
          group: p.group,
          ...(p.record && { record: { name: p.record.name, fields: p.record.fields.map(({ name, lo, width: w }) => ({ name, lo, width: w })) } }),
        })),
      );
      // A record port's fields tile the port: least significant first, no gap, no overlap.
      for (const { record, width: w } of info.ports.filter((p) => p.record)) {
        expect(record!.fields.reduce((lo, f) => (expect(f.lo).toBe(lo), lo + f.width), 0), record!.name).toBe(w);
      }
      // … and they are the ports the Verilog declares, in order.
      const text = byPath.get(info.file)!;
      expect(text).toContain(`module ${m.name} (`);
      expect(verilogPorts(text)).toEqual(info.ports.map(({ name, direction, width: w }) => ({ name, direction, width: w })));
      for (const [k, val] of Object.entries(info.params)) expect(text).toContain(` *   ${k} = ${val}\n`);
      expect(text).toContain('Generated by hdl-gen; do not edit. Regenerate with: make rtl');
    }
    expect(byPath.get('manifest.json')!.endsWith('}\n')).toBe(true);
  });

  test('the CRC block ports: clock/reset, s_axis with tkeep and tlast, m_axis with a 32-bit tdata and a 1-bit tuser', () => {
    const info = manifestOf(generated(config({ width: 16 }))).modules[0]!;
    expect(info.ports.map((p) => `${p.direction} ${p.name} ${p.width}`)).toEqual([
      'input clk 1',
      'input rst 1',
      'input s_axis_tdata 128',
      'input s_axis_tkeep 16',
      'input s_axis_tvalid 1',
      'output s_axis_tready 1',
      'input s_axis_tlast 1',
      'output m_axis_tdata 32',
      'output m_axis_tvalid 1',
      'input m_axis_tready 1',
      'output m_axis_tuser 1',
    ]);
  });

  test('writeGenerated writes exactly the files', () => {
    const dir = join(tmp, 'write');
    const files = generated(config({ width: 16 }));
    writeGenerated(files, dir);
    expect(readdirSync(dir).sort()).toEqual(files.map((f) => f.path).sort());
    for (const f of files) expect(readFileSync(join(dir, f.path), 'utf8')).toBe(f.text);
  });

  test('writeGenerated removes a module the previous generation wrote and this one does not, and nothing else', () => {
    const dir = join(tmp, 'regenerate');
    writeGenerated(generated(config({ width: 8, qps: 4 })), dir);
    writeFileSync(join(dir, 'notes.txt'), 'mine');
    const files = generate(config({ width: 8, qps: 2 }));
    writeGenerated(files, dir);
    expect(readdirSync(dir).sort()).toEqual([...files.map((f) => f.path), 'notes.txt'].sort());
    expect(readdirSync(dir)).not.toContain('mpa_tx_w8_q4.v');
  });
});

describe('configuration schema', () => {
  function zodIssues(input: unknown): ZodError['issues'] {
    try {
      parseConfig(input);
    } catch (e) {
      expect(e).toBeInstanceOf(ZodError);
      return (e as ZodError).issues;
    }
    throw new Error(`expected a ZodError for ${JSON.stringify(input)}`);
  }

  test('defaults: width 8, 1024 QPs, 4096 STag entries, IRRQ 8, ORQ 8, RQ 16; {} / undefined / null give them', () => {
    expect(DEFAULT_CONFIG).toEqual({ width: 8, qps: 1024, stagDepth: 4096, irrqDepth: 8, orqDepth: 8, rqDepth: 16 });
    expect(parseConfig({})).toEqual(DEFAULT_CONFIG);
    expect(parseConfig(undefined)).toEqual(DEFAULT_CONFIG);
    expect(parseConfig(null)).toEqual(DEFAULT_CONFIG);
    expect(Object.isFrozen(DEFAULT_CONFIG)).toBe(true);
  });

  test('accepts every datapath width and the range ends', () => {
    for (const width of [8, 16, 32, 64]) expect(parseConfig({ width }).width).toBe(width);
    const queues = { irrqDepth: 8, orqDepth: 8, rqDepth: 16 };
    expect(parseConfig({ qps: 1, stagDepth: 16 })).toEqual({ width: 8, qps: 1, stagDepth: 16, ...queues });
    expect(parseConfig({ qps: 1024, stagDepth: 65536 })).toEqual({ width: 8, qps: 1024, stagDepth: 65536, ...queues });
    expect(parseConfig({ irrqDepth: 2, orqDepth: 2, rqDepth: 2 })).toMatchObject({ irrqDepth: 2, orqDepth: 2, rqDepth: 2 });
    expect(parseConfig({ irrqDepth: 256, orqDepth: 256, rqDepth: 256 })).toMatchObject({ irrqDepth: 256, orqDepth: 256, rqDepth: 256 });
  });

  test.each([
    ['width 12', { width: 12 }, 'width'],
    ['width 4 (an atomic target must fit one beat)', { width: 4 }, 'width'],
    ['width 2', { width: 2 }, 'width'],
    ['width "8"', { width: '8' }, 'width'],
    ['qps 0', { qps: 0 }, 'qps'],
    ['qps 1.5', { qps: 1.5 }, 'qps'],
    ['qps 16385', { qps: 16385 }, 'qps'],
    ['stagDepth 100 (not a power of two)', { stagDepth: 100 }, 'stagDepth'],
    ['stagDepth 8 (too small)', { stagDepth: 8 }, 'stagDepth'],
    ['stagDepth 2^17 (above the 65536 the STag table block supports)', { stagDepth: 1 << 17 }, 'stagDepth'],
    ['irrqDepth 6 (not a power of two)', { irrqDepth: 6 }, 'irrqDepth'],
    ['orqDepth 1 (too small)', { orqDepth: 1 }, 'orqDepth'],
    ['rqDepth 512 (too large)', { rqDepth: 512 }, 'rqDepth'],
  ] as const)('rejects %s with a ZodError naming the field', (_label, input, field) => {
    const issues = zodIssues(input);
    expect(issues.map((i) => i.path.join('.'))).toEqual([field]);
  });

  test('the queue depths reach the RTL: the IRRQ count port widens, the ORQ and RQ rings deepen', () => {
    const top = (c: object) => modulesFor(config({ qps: 2, ...c })).find((m) => m.name === 'rnic_top_w8')!;
    const ctl = (c: object) => modulesFor(config({ qps: 2, ...c })).find((m) => m.name === 'ddp_rx_ctl_q2')!;
    expect(top({ irrqDepth: 32 }).ports.find((p) => p.name === 'stat_irrq_used')!.width).toBe(Math.log2(32) + 1);
    const v = emitVerilog(ctl({ orqDepth: 64, rqDepth: 4 }));
    // A ring per QP: QPs × depth entries.
    expect(v).toMatch(/reg \[\d+:0\] orq_ring_mem \[0:127\];/);
    expect(v).toMatch(/reg \[\d+:0\] rq_ring_mem \[0:7\];/);
  });

  test('stagDepth 100 says it must be a power of two', () => {
    expect(zodIssues({ stagDepth: 100 })[0]!.message).toBe('must be a power of two');
  });

  test('rejects an unknown key, naming it', () => {
    const issues = zodIssues({ width: 8, lanes: 2 });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.code).toBe('unrecognized_keys');
    expect((issues[0] as { keys?: string[] }).keys).toEqual(['lanes']);
    expect(issues[0]!.message).toContain('lanes');
  });

  test('several bad fields are all named', () => {
    expect(zodIssues({ width: 12, qps: 0, stagDepth: 100 }).map((i) => i.path.join('.')).sort()).toEqual(['qps', 'stagDepth', 'width']);
  });

  test('RnicConfigSchema is the schema parseConfig applies', () => {
    expect(RnicConfigSchema.parse({ qps: 9 })).toEqual(parseConfig({ qps: 9 }));
  });
});

describe('configHash', () => {
  test('is 16 hex digits and stable (the committed manifest records the default one)', () => {
    expect(configHash(DEFAULT_CONFIG)).toMatch(/^[0-9a-f]{16}$/);
    expect(configHash(DEFAULT_CONFIG)).toBe('0b76e81a7c4e08f7');
    expect(configHash(parseConfig({}))).toBe(configHash(DEFAULT_CONFIG));
  });

  test('does not depend on the order of the keys', () => {
    const a = parseConfig({ width: 16, qps: 8, stagDepth: 1024 });
    const b = parseConfig({ stagDepth: 1024, qps: 8, width: 16 });
    const c = { rqDepth: 16, qps: 8, orqDepth: 8, stagDepth: 1024, irrqDepth: 8, width: 16 } as RnicConfig;
    expect(configHash(a)).toBe(configHash(b));
    expect(configHash(a)).toBe(configHash(c));
  });

  test('changes with every field', () => {
    const hashes = [DEFAULT_CONFIG, config({ width: 16 }), config({ qps: 5 }), config({ stagDepth: 512 }), config({ irrqDepth: 16 }), config({ orqDepth: 16 }), config({ rqDepth: 32 }), config({ width: 64, qps: 4, stagDepth: 16 })].map(configHash);
    expect(new Set(hashes).size).toBe(hashes.length);
  });

  test('the manifest of a non-default configuration records its hash and configuration', () => {
    const c = config({ width: 32, qps: 7 });
    const m = manifestOf(generate(c));
    expect(m.configHash).toBe(configHash(c));
    expect(m.configHash).not.toBe(configHash(DEFAULT_CONFIG));
    expect(m.config).toEqual({ width: 32, qps: 7, stagDepth: 4096, irrqDepth: 8, orqDepth: 8, rqDepth: 16 });
  });
});

describe('the CLI', () => {
  const cli = (args: string[]) =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(process.execPath, [join(REPO, 'bin/rnic.mjs'), ...args], { cwd: REPO }, (err, stdout, stderr) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
      );
    });
  const readDir = (dir: string) => new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f), 'utf8')]));

  test('`rnic gen --out DIR` writes exactly the files of generate(DEFAULT_CONFIG)', async () => {
    const out = join(tmp, 'cli-default');
    const r = await cli(['gen', '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(readDir(out)).toEqual(asMap(generated(DEFAULT_CONFIG)));
  });

  test('`rnic gen --config F` uses the configuration in F', async () => {
    const cfg = join(tmp, 'w16.json');
    writeFileSync(cfg, JSON.stringify({ width: 16, qps: 2 }));
    const out = join(tmp, 'cli-w16');
    const r = await cli(['gen', '--config', cfg, '--out', out]);
    expect(r.code).toBe(0);
    expect(readDir(out)).toEqual(asMap(generate(config({ width: 16, qps: 2 }))));
  });

  test('a bad configuration exits 2, names the field and writes nothing', async () => {
    const cfg = join(tmp, 'bad.json');
    writeFileSync(cfg, JSON.stringify({ width: 12, colour: 'blue' }));
    const out = join(tmp, 'cli-bad');
    const r = await cli(['gen', '--config', cfg, '--out', out]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/width/);
    expect(r.stderr).toMatch(/colour/);
    expect(() => readdirSync(out)).toThrow();
  });
});

describe('the committed rtl/', () => {
  const STALE = 'rtl/ is stale: run `make rtl` (rnic gen --out rtl) and commit the result';

  test('equals generate(DEFAULT_CONFIG) byte for byte, with no other files', () => {
    const expected = asMap(generated(DEFAULT_CONFIG));
    const present = readdirSync(RTL).sort();
    expect(present, `${STALE}; rtl/ should hold exactly ${[...expected.keys()].join(', ')}`).toEqual([...expected.keys()].sort());
    for (const [path, text] of expected) {
      const committed = readFileSync(join(RTL, path), 'utf8');
      expect(committed === text, `${STALE}: rtl/${path} differs from what the generator emits`).toBe(true);
    }
  });
});
