import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { runTshark } from '../support/tshark';

const ROOT = new URL('../../', import.meta.url).pathname;
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

describe('rnic cosim (the CLI, --dut rnic by default)', () => {
  test(
    '--json reports the run; a flipped bit in a generated ddp_tx_w8_q2 (the requester of a 1-QP top), passed through --rtl, is caught with the evidence',
    () => {
      const ok = rnic('cosim', '--ops', '150', '--seed', '3', '--json');
      expect(ok.status, ok.stderr).toBe(0);
      const good = JSON.parse(ok.stdout);
      for (const k of ['seed', 'ops', 'packets', 'mismatches', 'violations', 'cycles', 'simCyclesPerSecond', 'firstMismatch']) expect(good, k).toHaveProperty(k);
      expect(good).toMatchObject({ seed: 3, ops: 150, mismatches: 0, violations: 0, firstMismatch: null });

      // The user's flow: `rnic gen --config F --out DIR`, an edit, `rnic cosim --rtl DIR`. One QP
      // keeps the two Verilator builds (the mutant and its traced replay) short.
      const dir = mkdtempSync(join(tmpdir(), 'rnic-rtl-'));
      const out = mkdtempSync(join(tmpdir(), 'rnic-evidence-'));
      try {
        const config = join(out, 'one-qp.json');
        writeFileSync(config, JSON.stringify({ width: 8, qps: 1 }));
        const gen = rnic('gen', '--config', config, '--out', dir);
        expect(gen.status, gen.stderr).toBe(0);
        const file = join(dir, 'ddp_tx_w8_q2.v');
        const v = readFileSync(file, 'utf8');
        // The RDMAP control octet of the Read Request: version 1, opcode 1 (0x41) becomes 0x43.
        // (The concatenation is broken over lines: any whitespace between its parts.)
        const site = /8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h41,(\s*)8'h41(\s*)\};/;
        expect(site.test(v)).toBe(true);
        writeFileSync(file, v.replace(site, "8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h0, 8'h43,$18'h41$2};"));
        const p = rnic('cosim', '--ops', '400', '--seed', '3', '--config', config, '--rtl', dir, '--out', out, '--json');
        expect(p.status).toBe(1);
        const r = JSON.parse(p.stdout);
        expect(r.qps).toBe(1);
        expect(r.mismatches).toBeGreaterThan(0);
        expect(r.firstMismatch.what).toMatch(/request ULPDU/);
        expect(r.firstMismatch.sideBySide).toMatch(/\* +opcode +RDMA Read Request/);
        // The evidence: both captures read by tshark, and a VCD of the replayed run.
        expect(r.evidence).toHaveLength(2);
        for (const f of r.evidence) {
          const frames = runTshark(readFileSync(f), ['-T', 'fields', '-e', 'tcp.len']).trim().split('\n');
          expect(frames.length, f).toBeGreaterThan(3);
        }
        expect(r.waveform).toMatch(/\.fst$/);
        expect(existsSync(r.waveform)).toBe(true);
        // Both sides' transaction traces, and `rnic diff` on them: the first divergent transaction
        // (the request the mutant sent, field by field) and its cycle.
        expect(r.traces).toHaveLength(2);
        const d = rnic('diff', ...r.traces);
        expect(d.status, d.stderr).toBe(1);
        expect(d.stdout).toMatch(/^first divergence: QP 0, FPDUs out \(requests\), record \d+ at cycle \d+/);
        expect(d.stdout).toMatch(/\* +op +RDMA Read Request +\| Send/);
        // Where it went wrong: QP and cycle.
        expect(r.firstMismatch.qp).toBe(0);
        expect(r.firstMismatch.cycle).toBeGreaterThan(0);
        expect(r.firstMismatch.cycle).toBeLessThanOrEqual(r.cycles + 100);
        // The printed replay carries every option that shaped the run, and fails the same way.
        expect(r.replay).toBe(`rnic cosim --dut rnic --width 8 --seed 3 --ops 400 --faults 0.05 --config ${config} --rtl ${dir} --trace`);
        const again = rnic(...r.replay.split(' ').slice(1), '--out', out, '--json');
        expect(again.status).toBe(1);
        expect(JSON.parse(again.stdout).firstMismatch).toEqual(r.firstMismatch);
      } finally {
        rmSync(dir, { recursive: true, force: true });
        rmSync(out, { recursive: true, force: true });
      }
    },
  );

  test('a bad option is a usage error naming it', () => {
    const p = rnic('cosim', '--ops', '0');
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(/--ops/);
  });
});
