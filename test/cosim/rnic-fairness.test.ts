import { describe, expect, test } from 'vitest';
import { DEFAULT_CONFIG } from '../../hdl-gen/gen/config';
import { cosimRnicFairness, firstStarved } from '../../sim/cosim/rnic-fairness';

describe('firstStarved: a source with items left waits at most `bound` items of others', () => {
  const totals = (o: Record<number, number>) => new Map(Object.entries(o).map(([k, v]) => [Number(k), v] as const));

  test('a strict rotation passes; serving the same source again while another waits does not', () => {
    expect(firstStarved([0, 1, 2, 0, 1, 2], totals({ 0: 2, 1: 2, 2: 2 }), 2)).toBeNull();
    // The sticky arbiter of a mutant: 0 1 2 0 …, QP 3 waits from the start.
    expect(firstStarved([0, 1, 2, 0, 1, 2, 3, 3], totals({ 0: 2, 1: 2, 2: 2, 3: 2 }), 3)).toEqual({ at: 3, source: 3, waited: 4 });
    expect(firstStarved([0, 0, 1, 1], totals({ 0: 2, 1: 2 }), 1)).toEqual({ at: 1, source: 1, waited: 2 });
  });

  test('a source that is done, or not yet ready, does not wait', () => {
    // Source 1 has one item: once sent, 0 may go on alone.
    expect(firstStarved([0, 1, 0, 0, 0], totals({ 0: 4, 1: 1 }), 1)).toBeNull();
    // Source 1 is ready from item 3 on.
    expect(firstStarved([0, 0, 0, 1, 0, 1], totals({ 0: 4, 1: 2 }), 1, (s) => (s === 1 ? 3 : 0))).toBeNull();
    expect(firstStarved([0, 0, 0, 0, 0, 1], totals({ 0: 5, 1: 1 }), 1, (s) => (s === 1 ? 3 : 0))).toEqual({ at: 4, source: 1, waited: 2 });
  });
});

test('rnic_top_w8: 8 QPs over the range busy, then one QP with both queues busy: every FPDU is the model\u2019s and the arbiters take turns', () => {
  for (const seed of [1, 2]) {
    const r = cosimRnicFairness({ width: 8, seed });
    expect(r.firstMismatch, `seed ${seed} (replay: rnic cosim --dut rnic_fairness --width 8 --seed ${seed})`).toBeNull();
    expect(r.mismatches).toBe(0);
    expect(r.qps).toBe(DEFAULT_CONFIG.qps);
    expect(r.busy).toHaveLength(8);
    expect(r.busy).toContain(0);
    expect(r.busy).toContain(DEFAULT_CONFIG.qps - 1);
    // Eight QPs × (two Writes of 1500..3000 octets + a Read of 3000..6000) in 186-octet segments, and one QP again.
    expect(r.fpdus).toBeGreaterThan(9 * 2 * Math.ceil(1500 / 186) + 9 * Math.ceil(3000 / 186));
  }
});
