import { describe, expect, test } from 'vitest';
import { cosimMpaRxShared, type Interleave, type MpaRxSharedOptions, type MpaRxSharedResult } from '../../sim/cosim/mpa-rx-shared';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
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
  // The contract (hdl-gen/blocks/mpa-rx.ts): the reader takes the next QP, its context read ahead,
  // once it has made the last one's beats, while their verdicts are still in the CRC pipeline;
  // the switch waits on a registered idle, a cycle more when the segment before leaves octets
  // over (these segments are full, not cut at FPDUs): measured 2.0 (8 octets) and 3.06 (64)
  // cycles a switch (2.2 at 64 before the registered idle).
  test.each([8, 64])('every segment a new QP costs at most 4 cycles per switch over the same segments back to back (%i octets)', (width) => {
    const opts = { width, qps: 4, seed: 3, fpdus: 40, pause: 0, segments: 'full' } as const;
    const same = run({ ...opts, interleave: 'same' });
    const rotate = run({ ...opts, interleave: 'rotate' });
    expect(rotate.inputBeats).toBe(same.inputBeats);
    const perSwitch = (rotate.cycles - same.cycles) / (rotate.switches - same.switches);
    expect(perSwitch).toBeGreaterThan(0);
    expect(perSwitch).toBeLessThanOrEqual(4);
  });
});

describe('mpa_rx_w<W>_q4 against the cost model (ts-model/cost, MPA_RX_SWITCH_CYCLES)', () => {
  // Each FPDU its own segment (FPDU alignment), MULPDU-sized, no back-pressure: tlast to tlast
  // over every QP, each FPDU within ±5% of its wire beats plus a switch where its QP changes.
  test.each([
    [8, 'same'],
    [8, 'rotate'],
    [64, 'same'],
    [64, 'rotate'],
  ] as const)('%i octets, %s interleaving: every FPDU within ±5%', (width, interleave) => {
    const r = run({ width, qps: 4, seed: 5, fpdus: 30, pause: 0, segments: 'fpdu', sizes: 'large', interleave });
    expect(r.cycleCheck).not.toBeNull();
    expect(r.cycleCheck!.fpdus).toBe(4 * 30 - 1);
    expect(r.cycleCheck!.within5Percent, JSON.stringify(r.cycleCheck)).toBe(r.cycleCheck!.fpdus);
  });
});

/**
 * 16 QPs, short streams, most ending in a fault: the reader moves on while a failed FPDU's verdict
 * is still in the CRC pipeline, so the verdict must stop its own QP's stream (in the context written
 * back), not the QP the reader has taken.
 */
const MANY = { width: 8, qps: 16, fpdus: 8, faults: 0.3 } as const;

describe('mpa_rx_w8_q16: verdicts after the reader has moved on', () => {
  test.each([
    ['every QP in turn, no back-pressure', { ...MANY, seed: 1, interleave: 'rotate', pause: 0 }],
    ['at random, back-pressure', { ...MANY, seed: 2, interleave: 'random' }],
  ] as const)('%s: every ULPDU, verdict and stop on its own QP', (_what, opts) => {
    const r = run(opts);
    expect(r.errorsChecked).toBeGreaterThan(8);
  });
});

describe('mpa_rx_w8_q16: the checks catch a broken context switch', () => {
  const opts = { ...MANY, seed: 2, interleave: 'random' } as const;
  const cases = [
    ["a write-back before the last QP's beats have left the CRC pipeline", (v: string) => v.replace(/assign drain_done = .*;/, 'assign drain_done = wb_pending_reg;')],
    ["an open FPDU's CRC not continued from its context", (v: string) => v.replace(/crc_resume_next = 1'b1;/, "crc_resume_next = 1'b0;")],
    ["a beat's CRC checked with the reader's QP's CRC setting, not its own", (v: string) => v.replace(/assign crc_bad = v_qp_crc_on /, 'assign crc_bad = ctx_crc_on_reg ')],
    ["a failed FPDU of the last QP stopping the reader's QP instead", (v: string) => v.replace(/wb_stopped_next = 1'b1;/, "stopped_next = 1'b1;")],
    ["a context read ahead while that QP's own write-back is still to come", (v: string) => v.replace(/assign ctx_ahead_read = [^;]*;/, 'assign ctx_ahead_read = ctx_switch;')],
    // A marker fault in an FPDU cut by a switch: this one needs the seed where one is.
    ["an open FPDU's marker fault not taken from its context", (v: string) => v.replace(/\(v_qp_resumed \? v_qp_mfault_in : marker_fault_reg\)/, 'marker_fault_reg'), { seed: 1, interleave: 'rotate', pause: 0 }],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, edit]) => (v: string) => {
    const out = edit(v);
    if (out === v) throw new Error('mutation site not found');
    return out;
  }));
  test.each(cases.map((c, i) => [c[0], mutants[i]!, c[2]] as const))('%s', (_what, mutate, over?: object) => {
    expect(cosimMpaRxShared({ ...opts, ...over, mutate }).mismatches).toBeGreaterThan(0);
  });
});
