import { fpduCycles } from '../../ts-model/cost/cost-model';
import { cycleCheck, type CycleCheck } from './cycle-check';
import { MPA_RX_VERDICT } from '../../hdl-gen/blocks/mpa-rx';
import { MpaDeframer } from '../../ts-model/mpa/deframer';
import { mpaOptions } from '../../ts-model/mpa/options';
import type { AxisFrame } from '../cocotb/axis-bus';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { type PlannedStream, planStream, preview, segmentStream } from './mpa-rx';
import { SEQ_LOW_BITS } from './qp-config';

/**
 * Co-simulation of mpa_rx_w<W>_q<N>, the receive block the QPs share: one stream per QP (random
 * configuration, ULPDU sizes and faults, as the one-stream run plans them), each QP's context
 * loaded on cfg_valid, its TCP segments sent whole on s_axis with its tid, interleaved as asked:
 *
 * - 'same': each QP's segments back to back, then the next QP's (a switch per stream);
 * - 'alternate': two QPs, segment by segment;
 * - 'rotate': every segment a new QP (round-robin over all);
 * - 'random': a QP drawn for each segment.
 *
 * The ULPDUs come out beat by beat with the QP in tid (interleaved between QPs; the sink assembles
 * each QP's on its own) and are compared, per QP, with the model's MpaDeframer: every ULPDU and
 * verdict, a failed FPDU's LLP error code in tuser, nothing after it. Deterministic from the seed.
 */
export type Interleave = 'same' | 'alternate' | 'rotate' | 'random';

export interface MpaRxSharedOptions extends DutSelection {
  readonly width: number;
  readonly qps: number;
  readonly seed: number;
  /** FPDUs per QP's stream. */
  readonly fpdus: number;
  readonly interleave: Interleave;
  /** ULPDU sizes (default 'mixed'; 'large': MULPDU-sized, for throughput and the cost model). */
  readonly sizes?: 'mixed' | 'large';
  /** Probability per FPDU of a fault (default 0). */
  readonly faults?: number;
  /** Back-pressure on both sides (default: random per run, 0..0.5); 0 for exact cycle counts. */
  readonly pause?: number;
  /**
   * TCP segment sizes (default 'mixed'); 'fpdu': each delivered FPDU a segment of its own (FPDU
   * alignment, RFC 5044 §8), whatever follows a fault one more. With no back-pressure and no
   * faults, 'fpdu' also checks each FPDU's cycles against the cost model (cycleCheck).
   */
  readonly segments?: 'mixed' | 'full' | 'fpdu';
}

export interface MpaRxSharedMismatch {
  readonly qp: number;
  readonly fpdu: number;
  readonly cycle: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
}

export interface MpaRxSharedResult {
  readonly module: string;
  readonly seed: number;
  readonly segments: number;
  /** Segments whose QP differs from the one before: context switches. */
  readonly switches: number;
  readonly fpdus: number;
  readonly delivered: number;
  readonly errorsChecked: number;
  readonly inputBeats: number;
  /** Cycles from the first segment to the last ULPDU beat. */
  readonly cycles: number;
  /** With segments 'fpdu' and pause 0: cycles per FPDU (tlast to tlast, any QP) against the cost model. */
  readonly cycleCheck: CycleCheck | null;
  readonly mismatches: number;
  readonly firstMismatch?: MpaRxSharedMismatch;
}

export function cosimMpaRxShared(opts: MpaRxSharedOptions): MpaRxSharedResult {
  const { width: W, qps } = opts;
  const module = `mpa_rx_w${W}_q${qps}`;
  const tb = new DutBench(...DutBench.opening(module, opts.seed, dutSelection(opts)));
  const { model, r } = tb;
  const source = tb.source('s_axis');
  const sink = tb.sink('m_axis', { interleaved: true });
  const cfg = tb.inputs('cfg');
  const p = opts.pause ?? r.int(0, 50) / 100;
  source.setPause(tb.pause(p));
  sink.setPause(tb.pause(p));
  const idle = model.handle('idle');
  const [sValid, sReady] = [model.handle('s_axis_tvalid'), model.handle('s_axis_tready')];
  let inputBeats = 0;
  tb.add({ sample: () => void (model.peekPreNumber(sValid) && model.peekPreNumber(sReady) && inputBeats++) });
  tb.reset();

  // Each QP's stream, its context loaded (a new connection), and what the model makes of it.
  const active = opts.interleave === 'alternate' ? Math.min(2, qps) : qps;
  const plans: PlannedStream[] = [];
  const expect: { good: Uint8Array[]; wire: number[]; fpdus: { startSeq: number; wireLength: number }[]; error: { index: number; code: number } | null }[] = [];
  for (let q = 0; q < active; q++) {
    const plan = planStream(r, W, opts.fpdus, opts.faults ?? 0, opts.sizes ?? 'mixed');
    const c = plan.cfg;
    plans.push(plan);
    const model = new MpaDeframer({ s0: c.s0, markers: c.markers, crc: c.crc, seq: c.seq, options: mpaOptions({ maxUlpduLength: c.maxUlpdu }) });
    const fpdus = model.push(plan.wire).flatMap((e) => (e.kind === 'fpdu' ? [e] : []));
    expect.push({
      good: fpdus.map((e) => e.ulpdu),
      wire: fpdus.map((e) => e.wireLength),
      fpdus,
      error: model.error ? { index: model.error.index, code: model.error.code } : null,
    });
    cfg.poke({ valid: 1, qp: q, markers: c.markers, crc: c.crc, s0: c.s0 & SEQ_LOW_BITS, seq: c.seq & SEQ_LOW_BITS, maxUlpdu: c.maxUlpdu });
    tb.cycle();
  }
  cfg.poke({ valid: 0 });

  // The segments, each QP's in order, interleaved.
  const queues = plans.map((plan, q) => segmentStream(r, W, plan, opts.segments ?? 'mixed', expect[q]!.fpdus));
  let segments = 0;
  let switches = 0;
  let last = -1;
  let turn = 0;
  for (;;) {
    const open = queues.map((q, i) => (q.length ? i : -1)).filter((i) => i >= 0);
    if (!open.length) break;
    let q: number;
    if (opts.interleave === 'same') q = open[0]!;
    else if (opts.interleave === 'random') q = r.pick(open);
    else {
      while (!queues[turn % active]!.length) turn++;
      q = turn++ % active;
    }
    source.send(queues[q]!.shift()!, { tid: q });
    segments++;
    if (q !== last) switches++;
    last = q;
  }

  const expected = expect.reduce((a, e) => a + e.good.length + (e.error ? 1 : 0), 0);
  const c0 = model.cycles;
  const total = plans.reduce((a, pl) => a + pl.wire.length, 0);
  const limit = Math.ceil(total / W) * 20 + segments * 40 + 4000;
  let timedOut = true;
  for (let i = 0; i < limit; i++) {
    if (source.idle && sink.available >= expected && model.peekNumber(idle) === 1) {
      timedOut = false;
      break;
    }
    tb.cycle();
  }
  const cycles = model.cycles - c0;
  const drained = `${sink.available} ULPDUs, source ${source.idle ? 'idle' : 'busy'}, idle ${model.peekNumber(idle)}`;
  // Anything output after the expected ULPDUs is a fault too: give it time to show.
  if (!timedOut) tb.run(4 * W + 64);

  const byQp: AxisFrame[][] = Array.from({ length: active }, () => []);
  for (const f of sink.drain()) {
    if (f.tid >= active) throw new Error(`${module}: m_axis_tid ${f.tid} names no QP with a stream`);
    byQp[f.tid]!.push(f);
  }
  const mismatches = new Tally<MpaRxSharedMismatch>(1);
  if (timedOut) mismatches.add({ qp: -1, fpdu: -1, cycle: model.cycles, what: 'the block did not drain', expected: `${expected} ULPDUs, every segment taken, idle`, actual: drained });
  let delivered = 0;
  let errorsChecked = 0;
  expect.forEach((e, qp) => {
    const frames = byQp[qp]!;
    let ok = true;
    const check = (cond: boolean, fpdu: number, what: string, want: string, got: string, cycle = model.cycles) => {
      if (!cond && ok) {
        ok = false;
        mismatches.add({ qp, fpdu, cycle, what, expected: want, actual: got });
      }
    };
    const verdict = (f: AxisFrame) => MPA_RX_VERDICT.decode(BigInt(f.tuser));
    e.good.forEach((u, i) => {
      const f = frames[i];
      check(f !== undefined, i, 'ULPDU missing', preview(u), 'nothing');
      if (!f) return;
      check(verdict(f).passed === 1n, i, 'tuser.passed', '1', String(verdict(f).passed), f.cycle);
      check(Buffer.from(f.data).equals(Buffer.from(u)), i, 'ULPDU', preview(u), preview(f.data), f.cycle);
    });
    delivered += e.good.length;
    if (e.error) {
      const f = frames[e.error.index];
      check(f !== undefined, e.error.index, 'failed FPDU missing', `passed 0, LLP error ${e.error.code}`, 'nothing');
      if (f) check(verdict(f).passed === 0n && Number(verdict(f).llp_err) === e.error.code, e.error.index, 'verdict of the failed FPDU', `passed 0, LLP error ${e.error.code}`, `passed ${verdict(f).passed}, LLP error ${verdict(f).llp_err}`, f.cycle);
      errorsChecked++;
    }
    const want = e.good.length + (e.error ? 1 : 0);
    check(frames.length === want, want, 'ULPDUs out', String(want), String(frames.length), frames[want]?.cycle);
  });
  // Cycles per FPDU against the cost model, in output order over every QP: from the tlast before
  // to this FPDU's, a context switch where its QP differs from the one before.
  let check: CycleCheck | null = null;
  const cycleOf = (f: AxisFrame): number => {
    if (f.cycle === undefined) throw new Error(`${module}: the sink gave a ULPDU no cycle`);
    return f.cycle;
  };
  if (opts.segments === 'fpdu' && p === 0 && !expect.some((e) => e.error)) {
    const out = byQp.flatMap((fs, qp) => fs.map((f, i) => ({ qp, cycle: cycleOf(f), wire: expect[qp]!.wire[i]!, ulpdu: f.data.length })));
    out.sort((a, b) => a.cycle - b.cycle);
    const pairs = out.slice(1).map((f, k) => ({
      measured: f.cycle - out[k]!.cycle,
      model: fpduCycles(W, { wireLength: f.wire, ulpduLength: f.ulpdu, placements: [], switched: f.qp !== out[k]!.qp }).mpaRx,
    }));
    check = cycleCheck(pairs);
  }
  tb.close();
  return {
    module,
    cycleCheck: check,
    seed: opts.seed,
    segments,
    switches,
    fpdus: active * opts.fpdus,
    delivered,
    errorsChecked,
    inputBeats,
    cycles,
    mismatches: mismatches.count,
    ...(mismatches.first && { firstMismatch: mismatches.first }),
  };
}
