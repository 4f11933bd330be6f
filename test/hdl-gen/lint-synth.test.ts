import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG, crc32cModule, emitVerilog, generate, type Manifest, type Module } from '../../hdl-gen/index';
import { CONSTRUCTS } from './constructs';
import { modulesFor } from '../../hdl-gen/gen/generate';
import { withDescendants } from '../../hdl-gen/core/hierarchy';

/**
 * Every module the project emits passes `verilator --lint-only -Wall` with no warning at all and
 * synthesises with yosys (generic `synth`, no latch left): the CRC block at every width (to
 * gates up to 16 octets, CRC_GATES_UP_TO), every module of generate(DEFAULT_CONFIG) (read through
 * its rnic.f, each linted and synthesised under the top it belongs to), and every construct module
 * of emit-constructs.test.ts. The tool runs start together in beforeAll, the slowest first, at most
 * one per CPU; each test awaits its own. CPU time on a quiet machine: yosys ~40 s on the generated
 * top (coarse); a verilator lint of the generated set ~0.4-1.4 s.
 */

const CRC_WIDTHS = [1, 2, 4, 8, 16, 32, 64] as const;
/**
 * The CRC block is mapped to gates up to this width; at 32 and 64 it stops at the coarse netlist
 * with `check -assert` (the same generator code; mapping crc32c_w64 was ~45 s of the file's CPU).
 * `rnic synth` and the depth tests map wide blocks with the real FPGA flows.
 */
const CRC_GATES_UP_TO = 16;

interface Job {
  readonly id: string;
  readonly cmd: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** Rough cost, to start the slowest first. */
  readonly cost: number;
}

interface RunResult {
  readonly code: number;
  readonly output: string;
  readonly ms: number;
}

const root = mkdtempSync(join(tmpdir(), 'hdl-gen-lint-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function run(job: Job): Promise<RunResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(job.cmd, job.args as string[], { cwd: job.cwd, maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
      resolve({ code, output: `${stdout}${stderr}${err && code === -1 ? String(err) : ''}`, ms: performance.now() - t0 });
    });
  });
}

/** Runs every job, at most `limit` at once, most expensive first. */
function pool(jobs: readonly Job[], limit: number): Map<string, Promise<RunResult>> {
  const order = [...jobs].sort((a, b) => b.cost - a.cost);
  const waiting = new Map<string, (r: RunResult) => void>();
  const results = new Map<string, Promise<RunResult>>();
  for (const j of jobs) results.set(j.id, new Promise((resolve) => waiting.set(j.id, resolve)));
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < order.length) {
      const job = order[next++]!;
      waiting.get(job.id)!(await run(job));
    }
  };
  for (let i = 0; i < Math.max(1, limit); i++) void worker();
  return results;
}

/** A unit of checking: the files to read, the top module, where to run. */
interface Target {
  readonly label: string;
  readonly top: string;
  readonly dir: string;
  readonly files: readonly string[];
  readonly cost: number;
  /** yosys maps it to gates; else it stops at the coarse netlist with `check -assert`. */
  readonly gates: boolean;
}

const targets: Target[] = [];

function writeModules(dirName: string, modules: readonly Module[]): string {
  const dir = join(root, dirName);
  mkdirSync(dir, { recursive: true });
  for (const m of modules) writeFileSync(join(dir, `${m.name}.v`), emitVerilog(m));
  return dir;
}

let manifest: Manifest;
/**
 * The generated modules verilator and yosys elaborate as tops: the manifest's top and any module
 * it does not instantiate. Elaborating the top goes through every module under it (verilator
 * lints each instance's module, yosys synthesises it), so running each of those as a top of its
 * own again would only repeat the work (minutes, with four QPs).
 */
let roots: Set<string>;
/**
 * A generated module whose text is, comments aside, that of a target checked on its own (the CRC
 * block at the datapath width): its runs are that target's, which also does the generated set's
 * coarse `check -assert`, rather than the same module linted and synthesised twice.
 */
const sameAs = new Map<string, string>();
/** Verilog without its comments: a generated file and the module emitted alone differ only in the header. */
const code = (v: string): string => v.replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, (c) => (/verilator|synthesis|yosys|lint/i.test(c) ? c : ''));
let results: Map<string, Promise<RunResult>>;
const started = performance.now();

beforeAll(() => {
  const alone = new Map<string, string>();
  for (const w of CRC_WIDTHS) {
    const m = crc32cModule(w);
    alone.set(`${m.name}.v`, code(emitVerilog(m)));
    targets.push({ label: m.name, top: m.name, dir: writeModules(m.name, [m]), files: [`${m.name}.v`], cost: w + 1, gates: w <= CRC_GATES_UP_TO });
  }
  const genDir = join(root, 'generated');
  mkdirSync(genDir);
  const files = generate(DEFAULT_CONFIG);
  for (const f of files) writeFileSync(join(genDir, f.path), f.text);
  for (const f of files) if (alone.get(f.path) === code(f.text)) sameAs.set(`generated/${f.path.replace(/\.v$/, '')}`, f.path.replace(/\.v$/, ''));
  manifest = JSON.parse(files.find((f) => f.path === 'manifest.json')!.text) as Manifest;
  const modules = modulesFor(DEFAULT_CONFIG);
  const under = new Set(withDescendants(modules.find((m) => m.name === manifest.top)!).map((m) => m.name));
  roots = new Set(modules.filter((m) => m.name === manifest.top || !under.has(m.name)).map((m) => m.name));
  for (const mod of manifest.modules) {
    if (!roots.has(mod.name) || sameAs.has(`generated/${mod.name}`)) continue;
    targets.push({ label: `generated/${mod.name}`, top: mod.name, dir: genDir, files: ['-f', 'rnic.f'], cost: DEFAULT_CONFIG.width + 1, gates: false });
  }
  for (const c of CONSTRUCTS) {
    const children = c.children?.() ?? [];
    const m = c.build();
    const dir = writeModules(c.name, [...children, m]);
    targets.push({ label: c.name, top: m.name, dir, files: [...children, m].map((x) => `${x.name}.v`), cost: 0, gates: true });
  }
  const jobs: Job[] = [];
  for (const t of targets) {
    jobs.push({ id: `lint ${t.label}`, cmd: 'verilator', args: ['--lint-only', '-Wall', '--top-module', t.top, ...t.files], cwd: t.dir, cost: t.cost / 10 });
    // yosys reads plain file lists; a -f list is expanded here.
    const generated = t.files[0] === '-f';
    const sources = generated ? manifest.modules.map((m) => m.file) : t.files;
    // The generated set is read whole and elaborated from each module down through yosys' coarse
    // synthesis (hierarchy, proc, memory inference, opt: where latches, undriven nets and
    // unsynthesizable constructs show), with `check -assert`. Mapping to gates is left to each
    // block's own test (test/support/rtl-checks.ts, memories kept as $mem cells: mapping the 8 KiB
    // payload FIFO to flip-flops takes yosys minutes; `rnic synth --target ice40` maps it to RAM).
    // A target standing in for a generated module also stops at the coarse netlist for its check.
    const standsIn = [...sameAs.values()].includes(t.label);
    const coarse = `synth -top ${t.top} -run begin:fine; check -assert`;
    const synth = !t.gates ? coarse : standsIn ? `${coarse}; synth -top ${t.top} -run fine:` : `synth -top ${t.top}`;
    const script = [`read_verilog ${sources.join(' ')}`, synth, 'select -assert-none t:$_DLATCH* t:$dlatch* t:$adlatch'].join('; ');
    jobs.push({ id: `synth ${t.label}`, cmd: 'yosys', args: ['-q', '-p', script], cwd: t.dir, cost: t.cost });
  }
  results = pool(jobs, availableParallelism());
});

afterAll(async () => {
  const all = await Promise.all([...results.entries()].map(async ([id, p]) => [id, (await p).ms] as const));
  const slow = all.filter(([, ms]) => ms > 1000).map(([id, ms]) => `${id} ${(ms / 1000).toFixed(1)} s`);
  console.log(`lint-synth: ${all.length} tool runs in ${((performance.now() - started) / 1000).toFixed(1)} s wall; over 1 s: ${slow.join(', ') || 'none'}; ${[...sameAs].map(([g, t]) => `${g} checked as ${t}`).join(', ') || 'no generated module checked as another'}`);
});

const labels = [
  ...CRC_WIDTHS.map((w) => `crc32c_w${w}`),
  // generate(DEFAULT_CONFIG) gives the width-8 CRC today; the list is read from its manifest.
  'generated',
  ...CONSTRUCTS.map((c) => c.name),
];

async function check(kind: 'lint' | 'synth', label: string): Promise<void> {
  const r = await results.get(`${kind} ${sameAs.get(label) ?? label}`)!;
  if (kind === 'lint') {
    expect(r.output.trim(), `verilator --lint-only -Wall on ${label} should print nothing`).toBe('');
    expect(r.code, `verilator exit status on ${label}`).toBe(0);
  } else {
    expect(r.output, `yosys on ${label}`).not.toMatch(/ERROR/);
    expect(r.code, `yosys exit status on ${label}:\n${r.output}`).toBe(0);
  }
}

describe.each(labels)('%s', (label) => {
  test('verilator --lint-only -Wall: no warnings', async () => {
    if (label === 'generated') {
      expect(manifest.modules.length).toBeGreaterThan(0);
      expect(roots.has(manifest.top)).toBe(true);
      for (const m of manifest.modules) if (roots.has(m.name)) await check('lint', `generated/${m.name}`);
    } else await check('lint', label);
  });

  test('yosys synth: no errors, no latches', async () => {
    if (label === 'generated') {
      expect(roots.has(manifest.top)).toBe(true);
      for (const m of manifest.modules) if (roots.has(m.name)) await check('synth', `generated/${m.name}`);
    } else await check('synth', label);
  });
});

test('the checks can fail: a deliberate warning and a deliberate latch are caught', async () => {
  const dir = join(root, 'negative');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'bad.v'),
    ['`default_nettype none', 'module bad (input wire [7:0] a, input wire en, output reg [3:0] y);', 'always @* if (en) y = a[3:0];', 'endmodule', ''].join('\n'),
  );
  const lint = await run({ id: 'neg lint', cmd: 'verilator', args: ['--lint-only', '-Wall', 'bad.v'], cwd: dir, cost: 0 });
  expect(lint.code).not.toBe(0);
  expect(lint.output).toMatch(/UNUSED|LATCH/);
  const synth = await run({ id: 'neg synth', cmd: 'yosys', args: ['-q', '-p', 'read_verilog bad.v; synth -top bad; select -assert-none t:$_DLATCH* t:$dlatch* t:$adlatch'], cwd: dir, cost: 0 });
  expect(synth.code).not.toBe(0);
  // The generated set is checked from its roots only: a module's faults show when it sits under a top.
  writeFileSync(
    join(dir, 'top.v'),
    ['`default_nettype none', 'module top (input wire [7:0] a, input wire en, output wire [3:0] y);', 'bad u_bad (.a(a), .en(en), .y(y));', 'endmodule', ''].join('\n'),
  );
  const under = await run({ id: 'neg lint under', cmd: 'verilator', args: ['--lint-only', '-Wall', '--top-module', 'top', 'top.v', 'bad.v'], cwd: dir, cost: 0 });
  expect(under.code).not.toBe(0);
  expect(under.output).toMatch(/bad\.v:\d+:\d+:/);
  const coarse = await run({ id: 'neg synth under', cmd: 'yosys', args: ['-q', '-p', 'read_verilog top.v bad.v; synth -top top -run begin:fine; check -assert; select -assert-none t:$_DLATCH* t:$dlatch* t:$adlatch'], cwd: dir, cost: 0 });
  expect(coarse.code).not.toBe(0);
});
