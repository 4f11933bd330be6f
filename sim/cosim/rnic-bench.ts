import { CQ_KIND, rnicTopInitCycles } from '../../hdl-gen/blocks/rnic-top';
import type { ModuleSources } from '../../hdl-gen/gen/sources';
import { RECV_BUFFER, CQ_ENTRY, WORK_REQUEST } from '../../hdl-gen/blocks/records';
import { stagTableInitCycles } from '../../hdl-gen/blocks/stag-table';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSink, AxisSource } from '../cocotb/axis';
import { Chance, never } from '../cocotb/pause';
import type { RecordSink } from '../cocotb/record-sink';
import type { RecordSource } from '../cocotb/record-source';
import type { CompiledModel } from '../verilator/build';
import type { PortHandle, SimModel } from '../verilator/model';
import { DutBench } from '../harness/dut-bench';
import type { HostMemoryModel } from '../harness/axi-memory';
import { axiHostMemory, topModuleOf } from './rnic-axi-bench';
import type { BackgroundMemory } from '../harness/memory';
import { openDut, type DutOptions } from '../harness/open-dut';
import { rtlEvent } from './events';
import { qpConfigFields, type QpConfig } from './qp-config';
import type { LocalWr, RtlRegion } from './rx-peer';
import { stagEntry } from './stag-cfg';
import { rnicRegisterMap } from '../../hdl-gen/blocks/rnic-regmap';
import { AxilMaster } from '../cocotb/axil-master';
import { qpConfigWrites, stagEntryWrites } from '../host/axil-config';
import { AxilHost, AxilItemQueue } from '../host/axil-host';
import { UlpduStreamCheck } from './tx-ports';
import { WR_NOISE_FIELDS, txRequestOf, wrFields, type TxRequest } from './wr-request';

/**
 * The testbench of `rnic_top_w<W>` (hdl-gen/blocks/rnic-top.ts) that the functional
 * co-simulations (random, sim/cosim/rnic.ts; scenario, rnic-scenario.ts; test/cosim/rnic-ord) and
 * the line-rate measurements (rnic-rate.ts) share: a driver for every input port (the network
 * stream with its QP on s_axis_tid, QP configuration, STag entries, receive buffers, work requests,
 * failure and abort pulses), the FPDUs out on m_axis by tid, the completion queue, and host memory.
 *
 * What differs between them are options: back-pressure (random, drawn from the run's stream, or
 * none at all), noise on the unused work-request fields, the memory model (a HostMemoryPort, or a
 * read-only background at a fixed read latency for transmit rates) and, for the rates, the record
 * of every beat's cycle.
 */
export interface RnicBenchOptions {
  /** The run's random stream: back-pressure, noise and memory latencies draw from it. */
  readonly r: Prng;
  /**
   * Per-cycle back-pressure on m_axis, m_cq and both memory ports (s_axis pauses half as often).
   * Absent: none, and nothing is drawn for it.
   */
  readonly backpressure?: number;
  /** Random values on the work-request fields a request's kind does not use (the RTL must ignore them). */
  readonly noise?: boolean;
  /** Host memory behind mem_*: a HostMemoryPort (default), or a read-only background memory whose reads return `latency` cycles after their handshake. */
  readonly memory?: { readonly background: BackgroundMemory; readonly latency: number };
  /** Record the cycle of every s_axis and m_axis beat (with m_axis tid and tlast) and check the FPDU stream's tkeep. */
  readonly measure?: boolean;
  /**
   * Open (RnicBench.open) the integrator's top rnic_top_axil_w<W> instead of rnic_top_w<W>: QP
   * contexts and STag entries then go through its AXI4-Lite registers, written by the host
   * helper (sim/host/axil-config.ts) on an AXI4-Lite master, instead of the configuration ports.
   */
  readonly axil?: boolean;
}

/**
 * Where QP contexts and STag entries go in: a record source on the top's configuration ports, or
 * host programs on the AXI4-Lite wrapper's registers (AxilItemQueue). An item is accepted once the
 * top has it.
 */
export interface ConfigQueue<T> {
  push(...items: T[]): void;
  pushAll(items: Iterable<T>): void;
  readonly idle: boolean;
  readonly acceptedCount: number;
}

/** A completion-queue entry: its QP, kind, the event as text (rx events) and when it came. */
export interface CqEntry {
  readonly qp: number;
  readonly kind: number;
  readonly sent: boolean;
  /** A fenced QP's first FPDU has arrived (kind 8). */
  readonly first: boolean;
  readonly text: string;
  readonly cycle: number;
}

/** m_axis beats taken: cycle, tlast and tid of each. */
export interface BeatLog {
  readonly at: number[];
  readonly last: boolean[];
  readonly tid: number[];
}

/** The QPs of each top opened here (its generator's or manifest's parameter). */
const topQps = new WeakMap<SimModel, number>();

/** Host memory reads answered 1..4 cycles after the handshake, counted as read-port.ts counts (one more). */
const HOST_LATENCY = { min: 2, max: 5 };

export class RnicBench extends DutBench {
  readonly qps: number;
  readonly sAxis: AxisSource;
  readonly mAxis: AxisSink;
  /** Host memory: a HostMemoryPort on mem_*, or an AXI4 slave on m_axi_* (a memory 'axi4' top, rnic-axi-bench.ts). */
  readonly mem: HostMemoryModel;
  readonly cfg: ConfigQueue<{ qp: number; c: QpConfig }>;
  /** The RNIC's STag table (one for every QP): entries to register, or with `enable: false` to deregister. */
  readonly stagCfg: ConfigQueue<RtlRegion & { readonly enable?: boolean }>;
  /** STag table entries (the top's stagDepth). */
  readonly stagDepth: number;
  /** The AXI4-Lite master of a wrapped top (rnic_top_axil), else null. */
  readonly axil: AxilMaster | null = null;
  readonly recv: RecordSource<{ qp: number; addr: bigint; len: number }>;
  readonly wr: RecordSource<{ qp: number; req: TxRequest; requestId?: number }>;
  readonly cqSink: RecordSink<CqEntry>;
  /** Work-request handshakes, in cycles. */
  readonly wrAt: number[] = [];
  /** With `measure`: m_axis beats, s_axis beat cycles, and violations of the FPDU stream. */
  readonly netBeats: BeatLog = { at: [], last: [], tid: [] };
  readonly inBeats: number[] = [];
  readonly violations: string[] = [];
  private txBlocked = false;
  /** QPs configured with cfg_fence whose first-FPDU completion has not come yet. */
  private readonly fencedQps = new Set<number>();
  /** Work requests taken and not yet reported sent, per QP. */
  private readonly unsent: number[];
  private pulse: { inject: { qp: number; err: number } | null; abort: number | null } = { inject: null, abort: null };
  private readonly h: (n: string) => PortHandle;

  constructor(model: SimModel, o: RnicBenchOptions, opened?: { readonly src: ModuleSources; readonly compiled: CompiledModel }) {
    super(model, o.r, opened);
    const m = model;
    const h = (this.h = (n: string) => m.handle(n));
    const r = this.r;
    const bp = o.backpressure;
    const qps = Number(opened?.src.params.qps ?? topQps.get(model));
    if (!Number.isInteger(qps) || qps < 1) throw new Error('RnicBench: open the top with RnicBench.open or openTop (its QP count comes from its parameters)');
    this.qps = qps;
    this.sAxis = this.source('s_axis', bp === undefined ? {} : { pause: this.pause(bp / 2) });
    this.mAxis = this.sink('m_axis', bp === undefined ? {} : { pause: this.pause(bp) });
    const chance = () => (bp === undefined ? never() : new Chance(r, bp));
    if (model.has('m_axi_awvalid')) {
      const report = (v: string) => this.report(v);
      this.mem = this.add(axiHostMemory(model, r, this.W, { ...(o.memory && { memory: o.memory }), pause: chance, report }));
    } else if (o.memory) {
      const bg = o.memory.background;
      // Read-only: a transmit run writes nothing, and the expected ULPDUs are read from it after.
      this.mem = this.memory({ width: this.W, memory: { read: (a, n) => bg.read(a, n), write: () => {} }, latency: { min: o.memory.latency, max: o.memory.latency }, report: (v) => this.report(v) });
    } else {
      this.mem = this.memory({ width: this.W, wrPause: chance(), rdPause: chance(), latency: HOST_LATENCY });
    }
    // Work requests taken and not yet reported sent, per QP (a new context starts from none).
    const unsent: number[] = new Array(this.qps).fill(0);
    const accepted: number[] = [];
    const onCfg = ({ qp, c }: { qp: number; c: QpConfig }) => {
      unsent[qp] = 0;
      if (c.fence) this.fencedQps.add(qp);
      else this.fencedQps.delete(qp);
    };
    if (model.has('s_axil_awaddr')) {
      // The wrapped top: QP contexts and STags through its registers, by the host's programs.
      const params = opened?.src.params;
      if (params?.stagDepth === undefined) throw new Error('RnicBench: open rnic_top_axil with RnicBench.open (its register map comes from its parameters)');
      this.stagDepth = Number(params.stagDepth);
      const map = rnicRegisterMap({ width: this.W, qps, stagDepth: this.stagDepth });
      const p = (x: number) => (bp === undefined ? never() : this.pause(x));
      const axil = new AxilMaster(m, { awPause: p(bp! / 2), wPause: p(bp! / 2), arPause: p(bp! / 2), bPause: p(bp!), rPause: p(bp!) });
      this.axil = this.add(axil);
      const host = new AxilHost(axil);
      // What the AXI4-Lite side breaks, with the other contracts the scoreboards cannot see.
      let seen = 0;
      this.add({ sample: () => {
        const all = [...axil.violations, ...host.errors];
        for (; seen < all.length; seen++) this.breaks(`AXI4-Lite: ${all[seen]} (cycle ${m.cycles})`);
      } });
      this.cfg = new AxilItemQueue(host, ({ qp, c }) => qpConfigWrites(map, qp, c), onCfg);
      this.stagCfg = new AxilItemQueue(host, (g) => stagEntryWrites(map, g));
    } else {
      this.stagDepth = 1 << model.handle('stag_cfg_index').width;
      // cfg_ready: the shared requester takes contexts after its init sweep (ddp-tx-sched.ts).
      this.cfg = this.recordSource('cfg', { ready: model.has('cfg_ready') ? 'cfg_ready' : null, fields: ({ qp, c }) => qpConfigFields(qp, c), onAccept: onCfg });
      // stag_cfg_ready: the STag table takes config writes after its init sweep (stag-table.ts);
      // RTL from before it had no ready and took every write.
      this.stagCfg = this.recordSource('stag_cfg', { ready: model.has('stag_cfg_ready') ? 'stag_cfg_ready' : null, fields: stagEntry });
    }
    this.recv = this.recordSource('s_recv', { layout: RECV_BUFFER, beside: ['qp'], fields: (b) => ({ ...b }) });
    this.wr = this.recordSource('wr', {
      layout: WORK_REQUEST,
      beside: ['qp'],
      ...(o.noise && { filler: () => ({ ...this.wr.group.random(r, WR_NOISE_FIELDS), solicited: 0, invalidate: 0 }) }),
      fields: ({ qp, req, requestId }) => ({ qp, ...wrFields(req, requestId) }),
      onAccept: ({ qp }) => {
        this.wrAt.push(m.cycles);
        accepted.push(qp);
      },
    });
    this.cqSink = this.recordSink('m_cq', {
      pause: chance(),
      // An entry offered stays until the host takes it (the AXI4 wrapper's write fence relies on it).
      stable: (v) => this.breaks(v),
      layout: CQ_ENTRY,
      beside: ['qp'],
      map: (f, cycle) => {
        const kind = f.kind as number;
        const sent = kind === CQ_KIND.SENT;
        const first = kind === CQ_KIND.FIRST_FPDU;
        if (sent) unsent[f.qp as number]!--;
        if (first) this.fencedQps.delete(f.qp as number);
        return { qp: f.qp as number, kind, sent, first, text: sent ? 'sent' : first ? 'first FPDU' : rtlEvent(f), cycle };
      },
    });
    // The contract the scoreboards cannot see: the RNIC idle is idle on its receive side.
    const [idle, rxIdle] = [h('idle'), h('rx_idle')];
    this.invariant('idle while rx_idle is 0', () => m.peekPreNumber(idle) === 0 || m.peekPreNumber(rxIdle) === 1);
    // Work requests taken and not yet reported sent, per QP (the requester's are the host's to count).
    this.add({ sample: () => void accepted.splice(0).forEach((q) => unsent[q]!++) });
    this.unsent = unsent;
    const pulse = { valid: h('inject_valid'), qp: h('inject_qp'), err: h('inject_err'), abort: h('abort_req'), abortQp: h('abort_qp') };
    this.add({
      drive: () => {
        const { inject, abort } = this.pulse;
        m.pokeNumber(pulse.valid, inject ? 1 : 0);
        m.pokeNumber(pulse.qp, inject?.qp ?? 0);
        m.pokeNumber(pulse.err, inject?.err ?? 0);
        m.pokeNumber(pulse.abort, abort !== null ? 1 : 0);
        m.pokeNumber(pulse.abortQp, abort ?? 0);
        if (inject || abort !== null) this.pulse = { inject: null, abort: null };
      },
    });
    if (o.measure) this.measure();
    // A model used before holds its last inputs: nothing offered while it is reset.
    for (const n of ['cfg_valid', 'stag_cfg_valid', 's_recv_valid', 'wr_valid', 'inject_valid', 'abort_req', 's_axis_tvalid']) if (m.has(n)) m.pokeNumber(h(n), 0);
  }

  /** Opens rnic_top_w<width> (rnic_top_axil_w<width> with `o.axil`; `dut.config`'s QPs and STag depth) and builds the bench on it. */
  static open(width: number, dut: DutOptions, o: RnicBenchOptions): RnicBench {
    const { src, compiled, model } = openDut(o.axil ? `rnic_top_axil_w${width}` : topModuleOf(width, dut.config), dut);
    return new RnicBench(model, o, { src, compiled });
  }

  /** The status of QP `qp` (stat_qp; its answer two cycles later, so this runs two cycles). */
  qpStatus(qp: number): { rxStopped: boolean; txStopped: boolean; irrqUsed: number; fenced: boolean; mpaErr: boolean } {
    const h = this.h;
    this.model.pokeNumber(h('stat_qp'), qp);
    this.run(3);
    const v = (n: string) => this.model.peekNumber(h(n));
    return { rxStopped: v('stat_rx_stopped') === 1, txStopped: v('stat_tx_stopped') === 1, irrqUsed: v('stat_irrq_used'), fenced: v('stat_fenced') === 1, mpaErr: v('stat_mpa_err') === 1 };
  }

  /** Octets per beat. */
  get W(): number {
    return this.model.handle('s_axis_tdata').width / 8;
  }

  private report(v: string): void {
    if (this.violations.length < 20) this.violations.push(v);
  }

  /** Beat timing for the rate measurements, and the FPDU stream's tkeep check. */
  private measure(): void {
    const m = this.model;
    const h = this.h;
    this.add(new UlpduStreamCheck({ model: m, width: this.W, cycle: () => m.cycles, report: (v) => this.report(v) }));
    const P = { tv: h('m_axis_tvalid'), tr: h('m_axis_tready'), tl: h('m_axis_tlast'), tid: h('m_axis_tid'), sv: h('s_axis_tvalid'), sr: h('s_axis_tready') };
    const nb = this.netBeats;
    this.add({
      sample: () => {
        const at = m.cycles;
        if (m.peekPreNumber(P.tv) === 1 && m.peekPreNumber(P.tr) === 1) {
          nb.at.push(at);
          nb.last.push(m.peekPreNumber(P.tl) === 1);
          nb.tid.push(m.peekPreNumber(P.tid));
        }
        if (m.peekPreNumber(P.sv) === 1 && m.peekPreNumber(P.sr) === 1) this.inBeats.push(at);
      },
    });
  }

  /** Completion-queue entries not yet taken by the scoreboard. */
  get cq(): CqEntry[] {
    return this.cqSink.records;
  }

  /** Posts the model's work request `w` on QP `qp`. */
  post(qp: number, w: LocalWr): void {
    this.wr.push({ qp, req: txRequestOf(w), requestId: w.requestId });
  }

  injectNext(qp: number, err: number): void {
    this.pulse.inject = { qp, err };
  }

  abort(qp: number): void {
    this.pulse.abort = qp;
  }

  /** Holds m_axis_tready low (the IRD overflow needs the responses to wait). */
  blockTx(on: boolean, pause = never()): void {
    this.txBlocked = on;
    this.mAxis.setPause(on ? { next: () => true } : pause);
  }

  /** Requests a QP may have in the IRRQ (stat_irrq_used counts 0 to the depth). */
  get irrqDepth(): number {
    return 1 << (this.h('stat_irrq_used').width - 1);
  }

  /** QP `qp`'s inbound Read/Atomic Requests not yet taken by the responder (runs two cycles). */
  irrqUsed(qp: number): number {
    return this.qpStatus(qp).irrqUsed;
  }

  /** System reset (which clears the STag table), then the QPs' contexts loaded (which restarts each QP), then the STags. */
  start(configs: readonly { qp: number; c: QpConfig }[], regions: readonly RtlRegion[]): void {
    this.reset();
    this.cfg.push(...configs);
    // cfg_ready: the top takes contexts after its init sweeps (rnicTopInitCycles), each in a few
    // cycles (ddp_rx_ctl's record first, then the other blocks: a bound, not a rate); over
    // AXI4-Lite each is a host program of a few dozen writes and reads.
    const perItem = this.axil ? 200 : 32;
    this.until(() => this.cfg.idle, rnicTopInitCycles(this.W, this.qps) + 100 + perItem * configs.length, 'the QP contexts to load');
    this.run(2); // the QPs' restart (a one-cycle reset)
    this.stagCfg.push(...regions);
    // The table takes them once its init sweep after the reset is over (stag_cfg_ready).
    const sweep = stagTableInitCycles(this.stagDepth);
    this.until(() => this.stagCfg.idle, sweep + 100 + (this.axil ? perItem : 1) * regions.length, 'the STags to load');
    this.run(2);
  }

  /** Runs until nothing is left to do (with m_axis blocked: nothing the RTL can do) for 8 cycles. */
  settle(what: string, maxCycles = 2_000_000): void {
    const m = this.model;
    const idle = this.h('idle');
    const rxIdle = this.h('rx_idle');
    const txValid = this.h('m_axis_tvalid');
    const rdValid = this.h(m.has('mem_rd_valid') ? 'mem_rd_valid' : 'm_axi_arvalid');
    const cqValid = this.h('m_cq_valid');
    // The RNIC is idle and every work request is reported sent, but those a fence holds.
    const start = this.status();
    try {
      this.settleQuiet(
        () =>
          this.sAxis.idle && this.cfg.idle && this.stagCfg.idle && this.recv.idle && this.wr.idle && this.mem.idle &&
          m.peekPreNumber(cqValid) === 0 && m.peekPreNumber(rxIdle) === 1 && m.peekPreNumber(rdValid) === 0 &&
          (this.txBlocked || (m.peekPreNumber(idle) === 1 && m.peekPreNumber(txValid) === 0 && this.unsent.every((n, q) => n <= 0 || this.fencedQps.has(q)))),
        maxCycles,
        `rnic_top to settle after ${what} (at the start: ${start})`,
        this.mem,
      );
    } catch (e) {
      // The status when it gave up says what is stuck; the one it started from, what it had to do.
      throw new Error(`${(e as Error).message}; at the end: ${this.status()}`);
    }
  }

  status(): string {
    const names = ['idle', 'rx_idle', 'm_axis_tvalid', 'm_axis_tready', 'm_cq_valid', 's_axis_tready', 'wr_ready', 'mem_rd_valid', 'mem_wr_valid', 'm_axi_arvalid', 'm_axi_awvalid'].filter((n) => this.model.has(n));
    return names.map((n) => `${n}=0x${this.model.peek(this.h(n)).toString(16)}`).join(' ') + ` source=${this.sAxis.idle ? 'idle' : 'busy'} wr=${this.wr.queue.length} recv=${this.recv.queue.length} txBlocked=${this.txBlocked}`;
  }

  /** Status ports by name, as numbers. */
  peekStatus(names: readonly string[]): Record<string, number> {
    return Object.fromEntries(names.map((n) => [n, this.model.peekNumber(this.h(n))]));
  }
}

/** The QPs of a top opened by openTop. */
export function qpsOfTop(model: SimModel): number {
  const n = topQps.get(model);
  if (n === undefined) throw new Error('qpsOfTop: open the top with openTop');
  return n;
}

/** The Verilated rnic_top_w<W> (with `opts.config`'s QPs and STag depth; rnic_top_axi_mem_w<W> for its memory 'axi4'), opened. */
export function openTop(width: number, opts: DutOptions = {}): SimModel {
  const { src, model } = openDut(topModuleOf(width, opts.config), opts);
  topQps.set(model, Number(src.params.qps));
  return model;
}
