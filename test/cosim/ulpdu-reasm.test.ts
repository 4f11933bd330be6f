import { describe, expect, test } from 'vitest';
import { REASM_PAGE_BEATS } from '../../hdl-gen/blocks/ulpdu-reasm';
import { cosimUlpduReasm, type Interleave, type UlpduReasmOptions, type UlpduReasmResult } from '../../sim/cosim/ulpdu-reasm';
import { mutantGroup } from '../../sim/harness/mutant-schemata';
import { SEED } from '../support/random';

const seedFor = (salt: number) => (SEED ^ Math.imul(salt, 0x85ebca6b)) >>> 0;

function run(opts: UlpduReasmOptions): UlpduReasmResult {
  const r = cosimUlpduReasm(opts);
  const replay = `replay: cosimUlpduReasm(${JSON.stringify(opts)}) (RNIC_SEED=${SEED})`;
  expect(r.firstMismatch, `${replay}\n${JSON.stringify(r.firstMismatch, null, 1)}`).toBeUndefined();
  expect(r.mismatches, replay).toBe(0);
  expect(r.delivered, replay).toBe(r.ulpdus);
  return r;
}

/** The smallest pool the block accepts: 4 pages. */
const minPool = (width: number) => 4 * REASM_PAGE_BEATS * width;

const INTERLEAVINGS: readonly Interleave[] = ['same', 'alternate', 'rotate', 'random'];

describe.each([8, 64])('ulpdu_reasm_w%i_q4: ULPDU beats interleaved by segment in, whole ULPDUs out', (width) => {
  test.each(INTERLEAVINGS)(
    "segments interleaved '%s', back-pressure: every ULPDU whole, in the order of its last beat, with tid and its verdict on every beat",
    (interleave) => {
      const r = run({ width, qps: 4, seed: seedFor(width * 31 + INTERLEAVINGS.indexOf(interleave)), ulpdus: 25, interleave });
      // And the 3 that run the pool dry at the end.
      expect(r.ulpdus).toBe((interleave === 'alternate' ? 2 : 4) * 25 + 3);
      if (interleave === 'same') expect(r.switches).toBe(4);
      else expect(r.peakOpen).toBeGreaterThan(1);
      if (interleave === 'alternate' || interleave === 'rotate') expect(r.switches).toBeGreaterThan(r.segments / 2);
    },
  );
});

describe('ulpdu_reasm_w8_q1024: a 10-bit tid', () => {
  test('8 QPs with traffic, QP 1023 among them, interleaved at random: every ULPDU to its QP', () => {
    const r = run({ width: 8, qps: 1024, seed: seedFor(1024), ulpdus: 10, interleave: 'random' });
    expect(r.streamQps).toContain(1023);
    expect(r.streamQps.some((q) => q >= 512)).toBe(true);
  });
});

describe('ulpdu_reasm: a new connection (cfg) drops its QP\'s open ULPDU', () => {
  // A 4-page pool: every dropped ULPDU holds at least a page, so a handful of leaked pages would
  // stop the input for good (the run's cycle bound reports it). With 2 QPs a QP's share is 2 pages:
  // partial ULPDUs span a page boundary or stop right at a page's end. cfg comes once the partial
  // ULPDU's beats are written (see UlpduReasmOptions.cfgAt), and now and then between ULPDUs.
  test.each([
    [8, 4],
    [8, 2],
    [64, 2],
  ])('the minimum pool (4 pages), %i octets, %i QPs: the partial ULPDU never appears, the QP\'s next ones do, no page leaks', (width, streams) => {
    const r = run({ width, qps: 4, streams, seed: seedFor(width + 4000 + streams), ulpdus: 40, interleave: 'random', poolBytes: minPool(width), abandon: 0.3 });
    expect(r.pages).toBe(4);
    expect(r.drops).toBeGreaterThan(10);
    expect(r.restarts).toBeGreaterThan(0);
  });
});

describe('ulpdu_reasm_w8_q16: pool pressure', () => {
  // 16 QPs, each with a ULPDU open most of the time (every segment a new QP), a page each at most
  // in a 16-page pool, m_axis ready one cycle in five: the writer waits for pages that only the
  // reader gives back, and everything still arrives.
  test('every QP with a partial ULPDU open at once, 20 pools of traffic, m_axis back-pressured: everything arrives', () => {
    const poolBytes = 16 * REASM_PAGE_BEATS * 8;
    const r = run({ width: 8, qps: 16, streams: 16, seed: seedFor(16), ulpdus: 60, interleave: 'rotate', poolBytes, pause: 0.2, sinkPause: 0.8 });
    expect(r.peakOpen).toBeGreaterThanOrEqual(12);
    expect(r.totalBytes).toBeGreaterThan(20 * poolBytes);
    // The input waited for pages (or for the writer) more often than it moved.
    expect(r.inputStalls).toBeGreaterThan(r.inputBeats);
  });
});

describe('ulpdu_reasm_w<W>_q4: rate (exact Verilator cycles, no back-pressure)', () => {
  // The contract: a beat a cycle in and out, a context switch costs one input cycle. Measured at
  // both widths: input stalls = context switches exactly (4 with 'same', one per segment with
  // 'rotate'), no output cycle without a beat inside a ULPDU or before a ULPDU long complete, and
  // a ULPDU's first beat out 6 cycles after its last beat in (5, plus the output skid).
  test.each([
    [8, 'same'],
    [8, 'rotate'],
    [64, 'same'],
    [64, 'rotate'],
  ] as const)('%i octets, %s: a beat a cycle in but one per context switch, a beat a cycle out', (width, interleave) => {
    const r = run({ width, qps: 4, seed: 7, ulpdus: 20, interleave, pause: 0 });
    expect(r.inputBeats).toBe(r.outputBeats);
    expect(r.inputStalls).toBe(r.inputSwitches);
    if (interleave === 'same') expect(r.inputSwitches).toBe(4);
    else expect(r.inputSwitches).toBeGreaterThan(r.segments / 2);
    expect(r.outputGapsWithin).toBe(0);
    expect(r.outputGapsBetween).toBe(0);
    expect(r.minLatency).toBe(6);
  });
});

describe('ulpdu_reasm: the checks catch a broken block', () => {
  const flow = { width: 8, qps: 4, seed: 11, ulpdus: 15, interleave: 'random' } as const;
  const drop = { width: 8, qps: 4, seed: 12, ulpdus: 30, interleave: 'random', poolBytes: minPool(8), abandon: 0.3 } as const;
  const cases = [
    ["a ULPDU's next page not linked (the link write disabled)", (v: string) => v.replace(/link_mem\[eff_page\] <= free_head_reg;/, 'link_mem[eff_page] <= link_mem[eff_page];'), flow],
    ["the verdict taken from the beat at the input, not the ULPDU's last", (v: string) => v.replace(/rd_verdict_next = next_ulpdu_verdict;/, 'rd_verdict_next = in_beat_verdict;'), flow],
    ["a dropped ULPDU's pages never given back (a leak)", (v: string) => v.replace(/assign desc_push = (\w+) \| \(drop_here & eff_open\);/, 'assign desc_push = $1;'), drop],
    ['a cfg that leaves the open ULPDU in place', (v: string) => v.replace(/assign drop_here = drop_pending_reg & /, "assign drop_here = 1'b0 & "), drop],
    // The two survivors of the mutation campaign on ulpdu_reasm_w8_q1024.
    ['idle 1 while a ULPDU waits in the descriptor FIFO or starts being read', (v: string) => v.replace(/assign idle = (\w+) & desc_none_reg & (\w+) & (\w+) & (\w+);/, 'assign idle = (($1 & desc_none_reg & $2) | $3) & $4;'), flow],
    ["the free list's page hidden when one is pushed as its last stored one loads (none set by a load alone)", (v: string) => v.replace(/free_none_next = (\w+) \? 1'b0 : \(\w+ \?/, "free_none_next = $1 ? 1'b0 : (free_load ?"), flow],
  ] as const;
  // One schemata build for the mutants it can hold (sim/harness/mutant-schemata.ts).
  const mutants = mutantGroup(cases.map(([, edit]) => (v: string) => {
    const out = edit(v);
    if (out === v) throw new Error('mutation site not found');
    return out;
  }));
  test.each(cases.map((c, i) => [c[0], mutants[i]!, c[2]] as const))('%s', (_what, mutate, opts) => {
    expect(cosimUlpduReasm({ ...opts, mutate }).mismatches).toBeGreaterThan(0);
  });
});
