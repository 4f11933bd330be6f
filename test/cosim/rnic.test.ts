import { describe, expect, test } from 'vitest';
import { rnicTopModule } from '../../hdl-gen/blocks/rnic-top';
import { DEFAULT_CONFIG, parseConfig } from '../../hdl-gen/gen/config';
import { cosimRnic, type RnicCosimOptions } from '../../sim/cosim/rnic';
import { withSeed } from '../support/random';
import { verilatorLint } from '../support/rtl-checks';

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

// The default configuration (1024 QPs: 64 QPs with traffic, spread over the whole range, QP 0 and
// the last among them, so every context memory's far entries are reached) at 8 octets; at 64
// octets, 2 QPs keep the default test run short (the blocks are the same whatever the QP count but
// for their memories' depth; `make regress` runs the 1024-QP w64 top).
describe.each([
  [8, DEFAULT_CONFIG.qps, 1500],
  [64, 2, 600],
])('rnic_top_w%i against the model, every QP, FPDU by FPDU', (width, qps, ops) => {
  test(
    `random work requests and peer messages with faults on ${qps} interleaved QPs: no mismatch, no write outside what the STag table allows`,
    () => {
      const res = run(width, { width, ops, faults: 0.1, config: parseConfig({ width, qps }) });
      expect(res.firstMismatch).toBeNull();
      expect(res.firstViolation).toBeNull();
      expect(res.mismatches).toBe(0);
      expect(res.violations).toBe(0);
      expect(res.ops).toBe(ops);
      expect(res.qps).toBe(qps);
      // Both directions carry traffic, every kind of work request goes out, QPs interleave.
      expect(res.fpdusIn).toBeGreaterThan(ops / 3);
      expect(res.fpdusOut).toBeGreaterThan(ops / 3);
      for (const c of ['work request write', 'work request send', 'work request read', 'work request atomic', 'work request immediate', 'QPs interleaved on s_axis', 'completion read', 'completion atomic', 'completion recv', 'completion order checked', 'terminate-received']) {
        expect(res.coverage[c] ?? 0, c).toBeGreaterThan(0);
      }
      // Markers on and off in each direction, each under CRC (the framing every connection chose).
      const framings = Object.keys(res.coverage).filter((k) => k.startsWith('mpa markers') && k.endsWith('crc=1'));
      for (const d of ['rx=1', 'rx=0', 'tx=1', 'tx=0']) expect(framings.some((k) => k.includes(d)), `${d} in ${framings.join(', ')}`).toBe(true);
      for (const op of ['sent RDMA Write', 'sent RDMA Read Request', 'sent RDMA Read Response', 'sent Send', 'sent Atomic Request', 'sent Atomic Response', 'sent Terminate', 'sent Immediate Data']) {
        expect(res.opcodes[op] ?? 0, op).toBeGreaterThan(0);
      }
      // Faults come from every kind in turn; most error codes are raised in a run this long.
      expect(Object.keys(res.errorsHit).length).toBeGreaterThan(15);
    },
  );
});

// A small top: every QP carries traffic, so the same QP's segments come back to back more often.
describe('rnic_top_w8 with 4 QPs against the model', () => {
  test('all 4 QPs interleaved, faults and back-pressure: no mismatch, no write outside what the STag table allows', () => {
    const ops = 800;
    const res = run(4, { width: 8, ops, faults: 0.1, config: parseConfig({ width: 8, qps: 4, stagDepth: 256 }) });
    expect(res.firstMismatch).toBeNull();
    expect(res.firstViolation).toBeNull();
    expect(res.mismatches).toBe(0);
    expect(res.violations).toBe(0);
    expect(res.qps).toBe(4);
    expect(res.ops).toBe(ops);
    expect(res.coverage['QPs interleaved on s_axis'] ?? 0).toBeGreaterThan(0);
    expect(Object.keys(res.errorsHit).length).toBeGreaterThan(10);
  });
});
