import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { rnicTopModule } from '../../hdl-gen/blocks/rnic-top';
import { cosimRnic, type RnicCosimOptions } from '../../sim/cosim/rnic';
import { withSeed } from '../support/random';
import { runTshark } from '../support/tshark';
import { verilatorLint } from '../support/rtl-checks';

const TIMEOUT = 600_000;
const ROOT = new URL('../../', import.meta.url).pathname;
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

/** One co-simulation run; the seed comes from RNIC_SEED and is named on failure. */
function run(salt: number, opts: Omit<RnicCosimOptions, 'seed'>) {
  return withSeed(salt, (r) => cosimRnic({ ...opts, seed: r.u32() }));
}

describe('rnic_top: generated Verilog', () => {
  test.each([
    [8, 1],
    [16, 3],
    [64, 2],
  ])('rnic_top_w%i with %i QPs is lint-clean under verilator -Wall', (w, n) => {
    expect(verilatorLint(rnicTopModule(w, n))).toBe('');
  });
});

describe.each([
  [8, 1500],
  [64, 600],
])('rnic_top_w%i against the model, every QP, FPDU by FPDU', (width, ops) => {
  test(
    'random work requests and peer messages with faults on 4 interleaved QPs: no mismatch, no write outside what the STag tables allow',
    () => {
      const res = run(width, { width, ops, faults: 0.1 });
      expect(res.firstMismatch).toBeNull();
      expect(res.firstViolation).toBeNull();
      expect(res.mismatches).toBe(0);
      expect(res.violations).toBe(0);
      expect(res.ops).toBe(ops);
      expect(res.qps).toBe(4);
      // Both directions carry traffic, every kind of work request goes out, QPs interleave.
      expect(res.fpdusIn).toBeGreaterThan(ops / 3);
      expect(res.fpdusOut).toBeGreaterThan(ops / 3);
      for (const c of ['work request write', 'work request send', 'work request read', 'work request atomic', 'work request immediate', 'QPs interleaved on s_axis', 'completion read', 'completion atomic', 'completion recv', 'terminate-received', 'mpa markers=1 crc=1', 'mpa markers=0 crc=1']) {
        expect(res.coverage[c] ?? 0, c).toBeGreaterThan(0);
      }
      for (const op of ['sent RDMA Write', 'sent RDMA Read Request', 'sent RDMA Read Response', 'sent Send', 'sent Atomic Request', 'sent Atomic Response', 'sent Terminate', 'sent Immediate Data']) {
        expect(res.opcodes[op] ?? 0, op).toBeGreaterThan(0);
      }
      // Faults come from every kind in turn; most error codes are raised in a run this long.
      expect(Object.keys(res.errorsHit).length).toBeGreaterThan(15);
    },
    TIMEOUT,
  );
});

describe('rnic cosim (the CLI, --dut rnic by default)', () => {
  test(
    '--json reports the run; a flipped bit in the committed ddp_tx_w8, passed through --rtl, is caught with the evidence',
    () => {
      const ok = rnic('cosim', '--ops', '150', '--seed', '3', '--json');
      expect(ok.status, ok.stderr).toBe(0);
      const good = JSON.parse(ok.stdout);
      for (const k of ['seed', 'ops', 'packets', 'mismatches', 'violations', 'cycles', 'simCyclesPerSecond', 'firstMismatch']) expect(good, k).toHaveProperty(k);
      expect(good).toMatchObject({ seed: 3, ops: 150, mismatches: 0, violations: 0, firstMismatch: null });

      const dir = mkdtempSync(join(tmpdir(), 'rnic-rtl-'));
      const out = mkdtempSync(join(tmpdir(), 'rnic-evidence-'));
      try {
        cpSync(join(ROOT, 'rtl'), dir, { recursive: true });
        const file = join(dir, 'ddp_tx_w8.v');
        const v = readFileSync(file, 'utf8');
        // The RDMAP control octet of the Read Request: version 1, opcode 1 (0x41) becomes 0x43.
        const site = "8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h41, 8'h41};";
        expect(v.includes(site)).toBe(true);
        writeFileSync(file, v.replace(site, "8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h43, 8'h41};"));
        const p = rnic('cosim', '--ops', '400', '--seed', '3', '--rtl', dir, '--out', out, '--json');
        expect(p.status).toBe(1);
        const r = JSON.parse(p.stdout);
        expect(r.mismatches).toBeGreaterThan(0);
        expect(r.firstMismatch.what).toMatch(/request ULPDU/);
        expect(r.firstMismatch.sideBySide).toMatch(/\* +opcode +RDMA Read Request/);
        // The evidence: both captures read by tshark, and a VCD of the replayed run.
        expect(r.evidence).toHaveLength(2);
        for (const f of r.evidence) {
          const frames = runTshark(readFileSync(f), ['-T', 'fields', '-e', 'tcp.len']).trim().split('\n');
          expect(frames.length, f).toBeGreaterThan(3);
        }
        expect(existsSync(r.vcd)).toBe(true);
        expect(r.replay).toMatch(/--seed 3/);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(out, { recursive: true, force: true });
      }
    },
    TIMEOUT,
  );

  test('a bad option is a usage error naming it', () => {
    const p = rnic('cosim', '--ops', '0');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/--ops/);
  });
});
