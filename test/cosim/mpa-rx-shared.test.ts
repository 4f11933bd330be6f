import { describe, expect, test } from 'vitest';
import { cosimMpaRxShared, type Interleave, type MpaRxSharedOptions, type MpaRxSharedResult } from '../../sim/cosim/mpa-rx-shared';
import { SEED } from '../support/random';

const seedFor = (salt: number) => (SEED ^ Math.imul(salt, 0x85ebca6b)) >>> 0;

function run(opts: MpaRxSharedOptions): MpaRxSharedResult {
  const r = cosimMpaRxShared(opts);
  const replay = `replay: cosimMpaRxShared(${JSON.stringify(opts)}) (RNIC_SEED=${SEED})`;
  expect(r.firstMismatch, `${replay}\n${JSON.stringify(r.firstMismatch, null, 1)}`).toBeUndefined();
  expect(r.mismatches, replay).toBe(0);
  return r;
}

const INTERLEAVINGS: readonly Interleave[] = ['same', 'alternate', 'rotate', 'random'];

describe.each([8, 64])('mpa_rx_w%i_q4, shared by 4 QPs, against a deframer per QP', (width) => {
  test.each(INTERLEAVINGS)(
    "segments interleaved '%s', faults and back-pressure: every ULPDU and verdict per QP (tid), a failed FPDU's code in tuser",
    (interleave) => {
      const r = run({ width, qps: 4, seed: seedFor(width * 31 + INTERLEAVINGS.indexOf(interleave)), fpdus: 60, interleave, faults: 0.02 });
      expect(r.delivered).toBeGreaterThan(r.fpdus / 4);
      // The interleaving is the one asked for: a switch per stream, or (nearly) every segment one.
      if (interleave === 'same') expect(r.switches).toBe(4);
      if (interleave === 'alternate' || interleave === 'rotate') expect(r.switches).toBeGreaterThan(r.segments / 2);
    },
  );
});

describe('mpa_rx_w<W>_q4: the cost of a context switch (exact Verilator cycles, no back-pressure)', () => {
  test.each([8, 64])('every segment a new QP costs at most 9 cycles per switch over the same segments back to back (%i octets)', (width) => {
    const opts = { width, qps: 4, seed: 3, fpdus: 40, pause: 0, segments: 'full' } as const;
    const same = run({ ...opts, interleave: 'same' });
    const rotate = run({ ...opts, interleave: 'rotate' });
    expect(rotate.inputBeats).toBe(same.inputBeats);
    const perSwitch = (rotate.cycles - same.cycles) / (rotate.switches - same.switches);
    expect(perSwitch).toBeGreaterThan(0);
    expect(perSwitch).toBeLessThanOrEqual(9);
  });
});

describe('mpa_rx_w8_q4: the checks catch a broken context switch', () => {
  const opts = { width: 8, qps: 4, seed: 3, fpdus: 40, interleave: 'random' } as const;
  test.each([
    ['a write-back before the CRC pipeline and the output have drained', (v: string) => v.replace(/assign ctx_save = .*;/, 'assign ctx_save = (ctx_state_reg == CTX_STATE_DRAIN) & (~cfg_valid);')],
    ["an open FPDU's CRC not continued from its context", (v: string) => v.replace(/crc_resume_next = 1'b1;/, "crc_resume_next = 1'b0;")],
  ])('%s', (_what, edit) => {
    const mutate = (v: string) => {
      const out = edit(v);
      if (out === v) throw new Error('mutation site not found');
      return out;
    };
    expect(cosimMpaRxShared({ ...opts, mutate }).mismatches).toBeGreaterThan(0);
  });
});
