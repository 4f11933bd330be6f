import { mpaTxName } from '../../hdl-gen/blocks/mpa-tx';
import { MPA_TX_ULPDU } from '../../hdl-gen/blocks/records';
import { fpduCycles } from '../../ts-model/cost/cost-model';
import { cycleCheck as summarize, type CycleCheck } from './cycle-check';
import { MpaFramer, mulpdu } from '../../ts-model/mpa';
import type { AxisSendBeat, AxisSink, AxisSource } from '../cocotb/axis';
import type { Component } from '../cocotb/component';
import type { RecordGroup } from '../cocotb/record-group';
import type { PortHandle } from '../verilator/model';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { SEQ_LOW_BITS } from './qp-config';
import { hex } from '../../ts-model/util/hex';

/**
 * Co-simulation of mpa_tx_w<W> against the model's MpaFramer: random streams (S0 anywhere, also
 * just below 2^32; markers and CRC on or off; ULPDUs of 0..MULPDU octets and some of 4 KiB),
 * random back-pressure on both sides; every FPDU compared octet for octet.
 *
 * Each connection is loaded on the configuration port (cfg_markers, cfg_crc, cfg_s0, cfg_seq;
 * cfg_qp when shared) before its first ULPDU, and s_axis_tuser carries only the ULPDU's length
 * (MPA_TX_ULPDU). With `restarts`, a QP starts a new connection (another S0, first sequence
 * number, markers, CRC) right after the last beat of its previous one is taken, while that one's
 * FPDUs are still in the block: the configuration lands beside other QPs' write-backs and the
 * old connection's own.
 *
 * With `qps` > 1, mpa_tx_w<W>_q<N> (shared by N QPs): each QP is its own stream, and ULPDUs of
 * random QPs follow each other: the same QP back to back, QPs alternating, a short ULPDU of
 * another QP between two of one QP's (the context memory's hazards). Every FPDU is compared with
 * its QP's framer, and m_axis_tid with its QP.
 */
export interface MpaTxCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  readonly fpdus: number;
  readonly sourcePause?: number;
  readonly sinkPause?: number;
  /** Fixed ULPDU size (e.g. 4096 for the efficiency benchmark); random when absent. */
  readonly ulpduLength?: number;
  /** Fixed stream settings; random per run when absent. */
  readonly markers?: boolean;
  readonly crc?: boolean;
  /** QPs sharing the block (default 1). */
  readonly qps?: number;
  /**
   * Probability per ULPDU (but a QP's first) that its QP starts a new connection before it
   * (default 0.03; 0 at full rate, sourcePause and sinkPause 0, where cycles are measured: a
   * restart right behind the QP's previous ULPDU holds the input a cycle).
   */
  readonly restarts?: number;
}

export interface MpaTxMismatch {
  readonly fpdu: number;
  readonly qp: number;
  /** Shared: the FPDU came out with another QP's m_axis_tid. */
  readonly tid?: string;
  /** The cycle the differing FPDU's last beat came out. */
  readonly cycle: number;
  readonly ulpduLength: number;
  readonly startSeq: string;
  readonly firstDifference: number;
  readonly expected: string;
  readonly actual: string;
}

export type { CycleCheck };

export interface MpaTxCosimResult {
  readonly dut: 'mpa_tx';
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly fpdus: number;
  readonly qps: number;
  /** QP 0's stream settings (each QP draws its own when qps > 1). */
  readonly markers: boolean;
  readonly crc: boolean;
  readonly s0: string;
  /** New connections loaded on a QP after its first (cfg_valid while its last FPDUs may be in the block). */
  readonly restarts: number;
  readonly mismatches: number;
  readonly payloadBytes: number;
  readonly wireBytes: number;
  readonly cycles: number;
  /** ULPDU octets per cycle ÷ width. */
  readonly efficiency: number;
  /** The best efficiency the FPDU overhead allows: ULPDU octets ÷ (W × Σ ⌈wire / W⌉). */
  readonly bound: number;
  readonly simCyclesPerSecond: number;
  readonly rtl: string;
  /**
   * Cycles each FPDU took in the RTL (tlast to tlast, so meaningful without back-pressure) next
   * to the cost model's MPA TX estimate: the relative error distribution.
   */
  readonly cycleCheck: CycleCheck;
  /** FPDUs with a marker in each place it can land (spec/mpa.md §4.5 cases a–d). */
  readonly coverage: { readonly leading: number; readonly afterHeader: number; readonly inside: number; readonly beforeCrc: number };
  /** err_length at the end of the run (must stay 0: every ULPDU matches its ULPDU_Length). */
  readonly errLength: boolean;
  /** Taken m_axis beats that are not packed (a partial beat before tlast, or tkeep not 2^k − 1): the first few. */
  readonly notPacked: readonly string[];
  readonly firstMismatch?: MpaTxMismatch;
}


/** A connection loaded on the configuration port: between ULPDU `after` (its QP's last of the one before; −1 none) and ULPDU `before`. */
interface Connection {
  readonly qp: number;
  readonly after: number;
  readonly before: number;
  readonly markers: boolean;
  readonly crc: boolean;
  readonly s0: number;
  readonly seq: number;
}

/**
 * Drives the configuration port as the block's contract asks: a connection once the last beat of
 * its QP's ULPDU `after` has been taken on s_axis, and before the first beat of ULPDU `before`
 * (the input holds while that one's configuration is not taken). One a cycle, in ULPDU order.
 */
class Configurer implements Component {
  /** ULPDUs whose last beat s_axis has taken. */
  private taken = 0;
  private offered = false;
  private readonly pending: Connection[] = [];
  private readonly handles: { readonly valid: PortHandle; readonly ready: PortHandle; readonly sValid: PortHandle; readonly sReady: PortHandle; readonly sLast: PortHandle };

  constructor(
    private readonly bench: DutBench,
    private readonly cfg: RecordGroup,
    private readonly shared: boolean,
  ) {
    const h = (n: string) => bench.model.handle(n);
    this.handles = { valid: h('cfg_valid'), ready: h('cfg_ready'), sValid: h('s_axis_tvalid'), sReady: h('s_axis_tready'), sLast: h('s_axis_tlast') };
  }

  load(c: Connection): void {
    this.pending.push(c);
  }

  /** ULPDU `taken` is the next to start and its connection is not loaded yet. */
  hold(): boolean {
    return this.pending[0]?.before === this.taken;
  }

  drive(): void {
    const c = this.pending[0];
    this.offered = c !== undefined && c.after < this.taken;
    if (c && this.offered) this.cfg.poke({ valid: 1, ...(this.shared && { qp: c.qp }), markers: c.markers, crc: c.crc, s0: c.s0 & SEQ_LOW_BITS, seq: c.seq & SEQ_LOW_BITS });
    else this.cfg.poke({ valid: 0 });
  }

  sample(): void {
    const m = this.bench.model;
    const { valid, ready, sValid, sReady, sLast } = this.handles;
    if (this.offered && m.peekPreNumber(valid) && m.peekPreNumber(ready)) this.pending.shift();
    if (m.peekPreNumber(sValid) && m.peekPreNumber(sReady) && m.peekPreNumber(sLast)) this.taken++;
  }
}

/**
 * The fixture of mpa_tx_w<W>: ULPDUs into s_axis, FPDUs out of m_axis, both with back-pressure;
 * the configuration port (Configurer); the cycle of every output tlast (the RTL's time per FPDU)
 * and every beat that is not packed.
 */
class MpaTxBench extends DutBench {
  readonly sAxis: AxisSource;
  readonly mAxis: AxisSink;
  readonly configurer: Configurer;
  readonly lastAt: number[] = [];
  /** Packed beats: every beat of an FPDU full but its last (a TCP engine takes the payload as is). */
  readonly notPacked: string[] = [];

  constructor(opts: MpaTxCosimOptions) {
    super(...DutBench.opening(mpaTxName(opts.width, opts.qps), opts.seed, dutSelection(opts)));
    const { model } = this;
    const configurer = new Configurer(this, this.inputs('cfg'), (opts.qps ?? 1) > 1);
    const pause = this.pause(opts.sourcePause ?? 0.15);
    // The source's pause draw comes first every cycle (the run replays from its seed).
    this.sAxis = this.source('s_axis', { pause: { next: () => pause.next() || configurer.hold() } });
    this.configurer = this.add(configurer);
    this.mAxis = this.sink('m_axis', { pause: this.pause(opts.sinkPause ?? 0.15) });
    const h = (n: string) => model.handle(n);
    const [tlast, tvalid, tready, tkeep] = [h('m_axis_tlast'), h('m_axis_tvalid'), h('m_axis_tready'), h('m_axis_tkeep')];
    const fullKeep = (1n << BigInt(opts.width)) - 1n;
    this.add({
      sample: () => {
        if (!model.peekPreNumber(tvalid) || !model.peekPreNumber(tready)) return;
        const last = model.peekPreNumber(tlast) === 1;
        if (last) this.lastAt.push(model.cycles);
        const keep = model.peekPre(tkeep);
        if ((!last && keep !== fullKeep) || (keep & (keep + 1n)) !== 0n) this.notPacked.push(`tkeep 0x${keep.toString(16)} (tlast ${last}) at cycle ${model.cycles}`);
      },
    });
  }
}

export function cosimMpaTx(opts: MpaTxCosimOptions): MpaTxCosimResult {
  const W = opts.width;
  const Q = opts.qps ?? 1;
  const name = mpaTxName(W, Q);
  const tb = new MpaTxBench(opts);
  const { model, r } = tb;

  const fullRate = opts.sourcePause === 0 && opts.sinkPause === 0;
  const restartP = opts.restarts ?? (fullRate ? 0 : 0.03);
  // A connection's settings: S0 anywhere, also just below 2^32; its first FPDU up to 4000 octets on.
  const connection = () => {
    const markers = opts.markers ?? r.bool(0.7);
    const crc = opts.crc ?? r.bool(0.8);
    const s0 = r.bool(0.4) ? (0x100000000 - 4 * r.int(1, 600)) >>> 0 : r.u32();
    const seq = (s0 + 4 * r.int(0, 1000)) >>> 0;
    return { markers, crc, s0, seq, framer: new MpaFramer({ s0, markers, crc, seq }) };
  };
  const streams = Array.from({ length: Q }, () => ({ ...connection(), last: -1 }));
  const { markers, crc, s0 } = streams[0]!;
  let restarts = 0;
  const expected: Uint8Array[] = [];
  const qpOf: number[] = [];
  let q = 0;
  const coverage = { leading: 0, afterHeader: 0, inside: 0, beforeCrc: 0 };
  const starts: number[] = [];
  const lengths: number[] = [];
  for (let i = 0; i < opts.fpdus; i++) {
    // Back to back, alternating, or any other QP.
    if (Q > 1 && !r.bool(0.3)) q = r.bool(0.5) ? (q + 1) % Q : r.int(0, Q - 1);
    // The QP's first ULPDU, or a new connection on it: loaded on the configuration port first.
    const restart = streams[q]!.last >= 0 && restartP > 0 && r.bool(restartP);
    if (restart) {
      streams[q] = { ...connection(), last: streams[q]!.last };
      restarts++;
    }
    const st = streams[q]!;
    if (st.last < 0 || restart) tb.configurer.load({ qp: q, after: st.last, before: i, markers: st.markers, crc: st.crc, s0: st.s0, seq: st.seq });
    st.last = i;
    const { framer, markers } = st;
    const max = mulpdu(1460, markers);
    const L = opts.ulpduLength ?? (r.bool(0.05) ? 4096 : r.pick([0, 1, 2, 3, 4, 5, r.int(0, 64), r.int(0, max), max]));
    const ulpdu = r.bytes(L);
    const seq = framer.seq;
    const framed = framer.frame(ulpdu);
    expected.push(framed.wire);
    for (const mk of framed.markers) {
      const hdr = framed.markers[0]?.leading ? 4 : 0;
      if (mk.leading) coverage.leading++;
      else if (mk.wireOffset === hdr + 4) coverage.afterHeader++;
      else if (mk.wireOffset + 4 === framed.crcOffset) coverage.beforeCrc++;
      else coverage.inside++;
    }
    starts.push(seq);
    lengths.push(L);
    qpOf.push(q);
    const tuser = MPA_TX_ULPDU.encode({ ulpdu_length: L });
    const beats: AxisSendBeat[] = [];
    for (let at = 0; at < L || beats.length === 0; at += W) {
      const k = Math.min(W, L - at);
      beats.push({ data: ulpdu.subarray(at, at + k), tkeep: (1n << BigInt(k)) - 1n, tlast: at + W >= L, tuser: beats.length === 0 ? tuser : 0, tid: q });
    }
    tb.sAxis.sendBeats(beats);
  }

  tb.reset();
  const timer = tb.timer();
  const wire = expected.reduce((a, e) => a + e.length, 0);
  tb.until(() => tb.mAxis.available >= opts.fpdus, wire * 4 + 10_000, `${opts.fpdus} FPDUs from ${name}`);
  const time = timer.stop();
  const errLength = model.peekNumber(model.handle('err_length')) === 1;
  tb.close();

  const { lastAt, notPacked } = tb;
  const mismatches = new Tally<MpaTxMismatch>(1);
  if (errLength) mismatches.count++;
  mismatches.count += notPacked.length;
  expected.forEach((want, i) => {
    const f = tb.mAxis.recv()!;
    const got = f.data;
    const qp = qpOf[i]!;
    if (Buffer.compare(got, want) === 0 && (Q === 1 || f.tid === qp)) return;
    let d = 0;
    while (d < want.length && d < got.length && want[d] === got[d]) d++;
    const tid = Q > 1 && f.tid !== qp ? `m_axis_tid ${f.tid}, expected ${qp}` : '';
    mismatches.add({ fpdu: i, qp, ...(tid && { tid }), cycle: f.cycle!, ulpduLength: lengths[i]!, startSeq: `0x${starts[i]!.toString(16)}`, firstDifference: d, expected: hex(want), actual: hex(got) });
  });
  const payload = lengths.reduce((a, b) => a + b, 0);
  // The first FPDU includes the pipeline's fill: compare from the second on.
  const pairs = lastAt.slice(1).map((t, j) => ({
    measured: t - lastAt[j]!,
    model: fpduCycles(W, { wireLength: expected[j + 1]!.length, ulpduLength: lengths[j + 1]!, placements: [] }).mpaTx,
  }));
  const cycleCheck = summarize(pairs);
  const beatsBound = expected.reduce((a, e) => a + Math.ceil(e.length / W), 0);
  const first = mismatches.first;
  return {
    dut: 'mpa_tx',
    module: name,
    width: W,
    seed: opts.seed,
    fpdus: opts.fpdus,
    qps: Q,
    markers,
    crc,
    s0: `0x${s0.toString(16)}`,
    restarts,
    mismatches: mismatches.count,
    payloadBytes: payload,
    wireBytes: wire,
    cycles: time.cycles,
    efficiency: payload / (time.cycles * W),
    bound: payload / (beatsBound * W),
    simCyclesPerSecond: time.simCyclesPerSecond,
    rtl: tb.origin,
    cycleCheck,
    coverage,
    errLength,
    notPacked: notPacked.slice(0, 5),
    ...(first && { firstMismatch: first }),
  };
}
