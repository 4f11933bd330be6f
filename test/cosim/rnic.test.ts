import { describe, expect, test } from 'vitest';
import { rnicTopModule } from '../../hdl-gen/blocks/rnic-top';
import { DEFAULT_CONFIG, parseConfig } from '../../hdl-gen/gen/config';
import { cosimRnic, type RnicCosimOptions } from '../../sim/cosim/rnic';
import { RnicBench } from '../../sim/cosim/rnic-bench';
import { INITIAL_MSN, S0, qpConfig, rxSeq } from '../../sim/cosim/rnic-rate';
import { never } from '../../sim/cocotb/pause';
import { segmentMessage } from '../../ts-model/ddp/segmenter';
import { MpaFramer } from '../../ts-model/mpa';
import { Opcode, rdmapControl } from '../../ts-model/rdmap/constants';
import { prng } from '../../ts-model/util/prng';
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

/**
 * m_cq keeps an entry it offers until the host takes it (valid/ready). The host holds m_cq_ready
 * low while a Write's `sent` completion waits and a peer's Send is placed: the Send's completion,
 * decided meanwhile, must go after it, not replace it on the bus. (Replacing it let the AXI4
 * wrapper's write fence, which marks the writes before an entry when it appears, pass the Send's
 * completion before its data: found by `make regress` at 64 octets.)
 */
function cqHoldsItsEntry(mutate?: (v: string) => string): { readonly texts: string[]; readonly broken: string[] } {
  const W = 8;
  const bench = RnicBench.open(W, { config: parseConfig({ width: W, qps: 4, stagDepth: 256 }), ...(mutate && { mutate }) }, { r: prng(5) });
  try {
    bench.start([qpConfig({ mulpdu: 8192, markers: true, crc: true }, 0)], []);
    bench.cqSink.setPause({ next: () => true });
    bench.wr.push({ qp: 0, req: { kind: 'write', stag: 0x5100, to: 0n, addr: 0x2000_0000n, len: 100 } });
    const valid = bench.model.handle('m_cq_valid');
    bench.until(() => bench.model.peekNumber(valid) === 1, 20_000, "the Write's sent completion on m_cq");
    bench.recv.push({ qp: 0, addr: 0x4000_0000n, len: 2048 });
    const framer = new MpaFramer({ s0: S0, markers: true, crc: true, seq: rxSeq(0) });
    const send = { tagged: false, rsvdUlp: rdmapControl(Opcode.SEND), rsvdUlp2: 0, qn: 0, msn: INITIAL_MSN, payload: prng(7).bytes(100) } as const;
    for (const seg of segmentMessage(send, 8192)) bench.sAxis.send(framer.frame(seg).wire, { tid: 0 });
    bench.run(2000);
    bench.cqSink.setPause(never());
    bench.until(() => bench.cq.length === 2, 20_000, 'both completions');
    return { texts: bench.cq.map((e) => e.text), broken: [...bench.broken] };
  } finally {
    bench.close();
  }
}

describe('rnic_top_w8: m_cq holds what it offers', () => {
  test("a Send's completion decided while a sent completion waits for the host goes after it; the entry offered never changes", () => {
    const r = cqHoldsItsEntry();
    expect(r.broken).toEqual([]);
    expect(r.texts).toHaveLength(2);
    expect(r.texts[0]).toBe('sent');
    expect(r.texts[1]).toMatch(/^recv length=100/);
  });

  test('the check sees a top that switches m_cq to a newer event (a mutant: nothing held)', () => {
    const r = cqHoldsItsEntry((v) => v.replace(/cq_held_next = m_cq_valid & \(~m_cq_ready\);/, "cq_held_next = 1'b0;"));
    expect(r.broken.join('\n')).toMatch(/m_cq: payload changed while waiting/);
    expect(r.texts[0]).toMatch(/^recv length=100/);
  });
});
