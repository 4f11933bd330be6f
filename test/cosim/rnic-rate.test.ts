import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { parseConfig } from '../../hdl-gen/gen/config';
import { fpduLength } from '../../ts-model/mpa';
import { openTop } from '../../sim/cosim/rnic-bench';
import { runTopRx, runTopTx, rnicRateFigures, type TopRxOptions, type TopTxOptions } from '../../sim/cosim/rnic-rate';
import type { SimModel } from '../../sim/verilator/model';

const WIDTHS = [8, 64] as const;
/**
 * The top at each width: configurations test/cosim/rnic.test.ts co-simulates too (its 4-QP top at
 * 8 octets, its 2-QP top at 64), so the two files share the Verilator builds (a 4-QP top at 64
 * octets is minutes of CI on its own).
 */
const QPS: Record<(typeof WIDTHS)[number], number> = { 8: 4, 64: 2 };
const topConfig = (w: (typeof WIDTHS)[number]) => parseConfig(w === 8 ? { width: w, qps: QPS[w], stagDepth: 256 } : { width: w, qps: QPS[w] });

const models = new Map<number, SimModel>();
beforeAll(() => {
  for (const w of WIDTHS) models.set(w, openTop(w, { config: topConfig(w) }));
});
afterAll(() => {
  for (const m of models.values()) m.close();
});

const segments = (length: number, mulpdu: number) => Math.max(1, Math.ceil(length / (mulpdu - 14)));

describe.each(WIDTHS)('rnic_top_w%i transmit at full rate', (width) => {
  test.each<[string, TopTxOptions]>([
    ['one QP, one FPDU per Write, markers and CRC', { qps: 1 }],
    ['every QP, MULPDU 1460, markers and CRC', { qps: QPS[width], mulpdu: 1460 }],
    ['one QP, no markers, no CRC, sources off W alignment', { qps: 1, markers: false, crc: false, misalign: 5 }],
    ['every QP, CRC without markers, 3000-octet Writes', { qps: QPS[width], markers: false, length: 3000, misalign: 62 }],
  ])('%s: every QP’s FPDUs deframe to the ULPDUs the model sends for its Writes', (_, o) => {
    const writes = 12;
    const run = runTopTx(width, { ...o, writes, model: models.get(width)! });
    expect(run.problems).toEqual([]);
    const qps = o.qps ?? 1;
    expect(run.ulpdus).toHaveLength(qps);
    for (let qp = 0; qp < qps; qp++) {
      expect(run.ulpdus[qp]!.length).toBe(run.expected[qp]!.length);
      run.ulpdus[qp]!.forEach((u, i) => expect(Buffer.compare(u, run.expected[qp]![i]!), `QP ${qp} ULPDU ${i}`).toBe(0));
    }
    const t = run.rate;
    expect(t.fpdus).toBe(writes * segments(o.length ?? 4096, o.mulpdu ?? 8192));
    expect(t.payloadBytes).toBe(writes * (o.length ?? 4096));
    // One FPDU per packet: every beat full but the last, so the beats are Σ ⌈FPDU / W⌉.
    expect(t.timing.beats).toBeGreaterThanOrEqual(Math.ceil(t.wireBytes / width));
    expect(t.timing.beats).toBeLessThan(Math.ceil(t.wireBytes / width) + t.fpdus);
    expect(t.timing.cycles).toBe(t.timing.beats + t.timing.gapsBetween + t.timing.gapsInside);
  });
});

describe.each(WIDTHS)('rnic_top_w%i receive at full rate', (width) => {
  test.each<[string, TopRxOptions]>([
    ['one FPDU per Write, markers and CRC', {}],
    ['MULPDU 1460 (three FPDUs per Write, placements off W alignment), markers and CRC', { mulpdu: 1460 }],
    ['CRC without markers', { markers: false }],
    ['neither markers nor CRC, 1000-octet Writes', { markers: false, crc: false, length: 1000 }],
    ['every QP, every segment another QP\u2019s (one FPDU each), MULPDU 1460', { qps: QPS[width], mulpdu: 1460 }],
  ])('%s: every Write lands in host memory at its TO, and nothing else is written', (_, o) => {
    const writes = 12;
    const run = runTopRx(width, { ...o, writes, model: models.get(width)! });
    expect(run.problems).toEqual([]);
    expect(run.placed).toHaveLength(writes);
    run.placed.forEach((p, i) => expect(Buffer.compare(p.sent, p.memory), `Write ${i} at 0x${p.addr.toString(16)}`).toBe(0));
    const t = run.rate;
    const length = o.length ?? 4096;
    const mulpdu = o.mulpdu ?? 8192;
    expect(t.fpdus).toBe(writes * segments(length, mulpdu));
    // The wire is every FPDU (length field, ULPDU, pad, CRC) and, with markers, a marker every 512 octets.
    const perWrite = Array.from({ length: segments(length, mulpdu) }, (_, k) => fpduLength(14 + Math.min(mulpdu - 14, length - k * (mulpdu - 14))));
    const unmarked = writes * perWrite.reduce((a, b) => a + b, 0);
    if (o.markers === false) expect(t.wireBytes).toBe(unmarked);
    else expect(t.wireBytes).toBeGreaterThan(unmarked);
    // All of it taken in full beats (one QP: the harness sends W-multiple TCP segments), or in
    // full beats but each segment's last (every FPDU a segment).
    if (!o.qps) expect(t.input.beats).toBe(Math.ceil(t.wireBytes / width));
    else {
      expect(t.input.beats).toBeGreaterThanOrEqual(Math.ceil(t.wireBytes / width));
      expect(t.input.beats).toBeLessThanOrEqual(Math.ceil(t.wireBytes / width) + t.fpdus);
    }
    // Every FPDU after the first against the cost model, when each is a segment of its own.
    if (o.qps) {
      expect(t.cycleCheck?.fpdus).toBe(t.fpdus - 1);
      expect(t.cycleCheck?.within5Percent, JSON.stringify(t.cycleCheck)).toBe(t.fpdus - 1);
    }
    else expect(t.cycleCheck).toBeNull();
    expect(t.placement.cycles).toBe(t.placement.beats + t.placement.gapsBetween + t.placement.gapsInside);
  });
});

test('rnicRateFigures: JSON rows of name, width, value and unit for each width', () => {
  const rows = rnicRateFigures({ widths: [8], writes: 3 });
  // Nine transmit cases (two of them behind a 200-cycle read latency, two on every QP of the
  // default top) and six receive cases (two on every QP), three rows each; the three receive
  // cases of more than one QP also hold each FPDU against the cost model.
  expect(rows.length).toBe(48);
  for (const r of rows) {
    expect(Object.keys(r).sort()).toEqual(['name', 'unit', 'value', 'width']);
    expect(r.width).toBe(8);
    expect(Number.isFinite(r.value) && r.value > 0).toBe(true);
  }
  expect(JSON.parse(JSON.stringify(rows))).toEqual(rows);
});
