import { describe, expect, test } from 'vitest';
import { MPA_RX_SWITCH_CYCLES, RX_SWITCH_CYCLES, ULPDU_REASM_SWITCH_CYCLES, fpduCycles, rxInputCycles, totalCycles } from '../../ts-model/cost/cost-model';

/** The cost model's arithmetic; co-simulation holds the RTL to it (mpa_rx, mpa_tx, the shared mpa_rx). */
describe('fpduCycles', () => {
  const shape = { wireLength: 1460, ulpduLength: 1446, placements: [{ address: 0x1003n, length: 1432 }] };

  test('every stage streams a beat per cycle: wire beats in and out, ULPDU beats, placement beats from the address alignment', () => {
    expect(fpduCycles(64, shape)).toEqual({ mpaTx: 23, mpaRx: 23, ddpRx: 23, place: Math.ceil((3 + 1432) / 64) });
    expect(totalCycles(fpduCycles(64, shape))).toBe(23 * 3 + 23);
  });

  test('a segment of another QP adds the shared mpa_rx context switch to mpaRx only', () => {
    const same = fpduCycles(64, shape);
    const switched = fpduCycles(64, { ...shape, switched: true });
    expect(switched).toEqual({ ...same, mpaRx: same.mpaRx + MPA_RX_SWITCH_CYCLES });
  });

  test("rnic_top's s_axis: an FPDU's beats, and at a switch mpa_rx's and ulpdu_reasm's", () => {
    expect(RX_SWITCH_CYCLES).toBe(MPA_RX_SWITCH_CYCLES + ULPDU_REASM_SWITCH_CYCLES);
    expect(rxInputCycles(64, { wireLength: 1480 })).toBe(24);
    expect(rxInputCycles(64, { wireLength: 1480, switched: true })).toBe(24 + RX_SWITCH_CYCLES);
  });

  test('a width that is not a positive integer is refused, naming it', () => {
    expect(() => fpduCycles(0, shape)).toThrow(/width must be a positive integer, got 0/);
  });
});
