import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseScenario } from '../../ts-model/scenario/schema';
import { cosimScenario } from '../../sim/cosim/rnic-scenario';
import { placementRecords, readTrace, type TraceRecord } from '../../sim/cosim/trace';
import { flipMemWrData, sends } from '../support/scenario-fixtures';

const ROOT = new URL('../../', import.meta.url).pathname;
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', ...args], { cwd: ROOT, encoding: 'utf8' });

/** The kinds of records in a trace: `fpdu in`, `fpdu out`, `placement`, … */
const kinds = (rs: readonly TraceRecord[]) => new Set(rs.map((r) => (r.t === 'fpdu' ? `fpdu ${r.dir}` : r.t)));

describe('placement records (trace.ts, shared by the random run and the scenario run)', () => {
  test('one record per contiguous run of a step\'s writes, in address order, with the latest cycle of each', () => {
    const mem = new Uint8Array(64).map((_, i) => i);
    const read = (a: bigint, n: number) => mem.subarray(Number(a), Number(a) + n);
    const spans = [
      { lo: 40n, hi: 47n, cycle: 9 },
      { lo: 0n, hi: 7n, cycle: 5 },
      { lo: 8n, hi: 11n, cycle: 3 }, // adjacent: merged
      { lo: 4n, hi: 9n, cycle: 7 }, // overlapping: merged
    ];
    expect(placementRecords(2, spans, read, true)).toEqual([
      { t: 'placement', qp: 2, addr: '0x0', len: 12, data: '000102030405060708090a0b', cycle: 7 },
      { t: 'placement', qp: 2, addr: '0x28', len: 8, data: '28292a2b2c2d2e2f', cycle: 9 },
    ]);
    // The model's carry no cycle; more than 16 octets are hashed.
    expect(placementRecords(0, [{ lo: 0n, hi: 31n }], read, false)).toEqual([{ t: 'placement', qp: 0, addr: '0x0', len: 32, data: expect.stringMatching(/^sha256:[0-9a-f]{16}$/) }]);
  });
});

describe('rnic cosim --scenario --trace-dir: the transaction traces of the RTL as the responder', () => {
  test('a passing scenario: two traces, every kind of record, and `rnic diff` finds them equal', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rnic-scenario-trace-'));
    try {
      const p = rnic('cosim', '--scenario', 'examples/rnic-responder.json', '--trace-dir', dir);
      expect(p.status, p.stderr + p.stdout).toBe(0);
      expect(p.stdout).toMatch(/^PASS/m);
      const model = join(dir, 'rnic_top_w8-scenario-seed1-model.jsonl');
      const rtl = join(dir, 'rnic_top_w8-scenario-seed1-rtl.jsonl');
      expect(p.stdout).toContain(`traces: ${model} ${rtl}`);
      expect(p.stdout).toContain(`diff: rnic diff ${model} ${rtl}`);
      const [m, r] = [model, rtl].map((f) => readTrace(f).map((x) => x.r)) as [TraceRecord[], TraceRecord[]];
      expect(m[0]).toMatchObject({ t: 'meta', side: 'model', module: 'rnic_top_w8', seed: 1, scenario: expect.stringMatching(/^rnic responder/) });
      expect(r[0]).toMatchObject({ t: 'meta', side: 'rtl' });
      for (const rs of [m, r]) for (const k of ['fpdu in', 'fpdu out', 'placement', 'completion']) expect(kinds(rs).has(k), k).toBe(true);
      // The RTL's records carry the cycle they happened at; the model's none.
      expect(r.slice(1).every((x) => 'cycle' in x && typeof x.cycle === 'number' && x.cycle > 0)).toBe(true);
      expect(m.slice(1).some((x) => 'cycle' in x)).toBe(false);
      // The responder's own work requests (an RDMA Write and a Send) go out as requests.
      expect(r.flatMap((x) => (x.t === 'fpdu' && x.dir === 'out' ? [x.op] : []))).toEqual(expect.arrayContaining(['RDMA Read Response', 'Atomic Response', 'RDMA Write', 'Send']));
      const d = rnic('diff', model, rtl);
      expect(d.status, d.stderr).toBe(0);
      expect(d.stdout).toMatch(new RegExp(`^no divergence: ${m.length - 1} and ${r.length - 1} records`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a mutated RTL: both traces in the evidence directory, and `rnic diff` names the first divergent placement with its cycle', () => {
    const out = mkdtempSync(join(tmpdir(), 'rnic-scenario-trace-bad-'));
    try {
      // The mutant of rnic-scenario.test.ts (bit 0 of every mem_wr_data beat flipped): the same build.
      const s = parseScenario(sends({ ops: sends().ops!.slice(0, 2) }));
      const r = cosimScenario(s, { width: 8, seed: 1, mutate: flipMemWrData, evidenceDir: out });
      expect(r.mismatches).toBeGreaterThan(0);
      const model = join(out, 'rnic_top_w8-scenario-seed1-model.jsonl');
      const rtl = join(out, 'rnic_top_w8-scenario-seed1-rtl.jsonl');
      expect(r.traces).toEqual([model, rtl]);
      expect(existsSync(model) && existsSync(rtl)).toBe(true);
      const d = rnic('diff', ...r.traces);
      expect(d.status, d.stderr).toBe(1);
      const head = /^first divergence: QP 0, placements, record 0 at cycle (\d+) \(/.exec(d.stdout);
      expect(head, d.stdout).not.toBeNull();
      // The run of writes that holds the first wrong octet: its last write is no earlier than that octet's.
      expect(Number(head![1])).toBeGreaterThanOrEqual(r.firstMismatch!.cycle);
      expect(d.stdout).toMatch(/^\* +data +sha256:[0-9a-f]+ +\| sha256:[0-9a-f]+$/m);
      expect(d.stdout).toMatch(/^ +addr +0x[0-9a-f]+ +\| 0x[0-9a-f]+$/m);
      // Without a failure and without --trace-dir nothing is written.
      const ok = mkdtempSync(join(tmpdir(), 'rnic-scenario-trace-ok-'));
      try {
        expect(cosimScenario(s, { width: 8, seed: 1, evidenceDir: ok }).traces).toEqual([]);
      } finally {
        rmSync(ok, { recursive: true, force: true });
      }
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
