import { ORQ_ENTRY, RECV_BUFFER, RX_EVENT_FIELDS } from '../../hdl-gen/blocks/records';
import { IRD_ORD_NO_NEGOTIATE, MAX_ULPDU_LENGTH } from '../../ts-model/mpa/constants';
import type { MpaStreamConfig } from '../../ts-model/mpa';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSink, AxisSource } from '../cocotb/axis';
import { Chance, never } from '../cocotb/pause';
import type { RecordSink } from '../cocotb/record-sink';
import type { RecordSource } from '../cocotb/record-source';
import type { PortHandle, SimModel } from '../verilator/model';
import { DutBench } from '../harness/dut-bench';
import type { HostMemoryPort } from '../harness/host-memory-port';
import { openDut, type DutOptions } from '../harness/open-dut';
import { rtlEvent } from './events';
import { SEQ_LOW_BITS } from './qp-config';
import type { RtlRegion, StepSideEffects } from './rx-peer';
import { stagEntry } from './stag-cfg';

/** The Verilated ddp_rx_w<W> (or rnic_rx_w<W>, with mpa_rx in front), opened. */
export function openRx(width: number, opts: DutOptions = {}, mpa = false): SimModel {
  return openDut(`${mpa ? 'rnic_rx' : 'ddp_rx'}_w${width}`, opts).model;
}

/** An event of m_evt and the cycle it came. */
export interface RxEvent {
  readonly text: string;
  readonly cycle: number;
}

/** Host memory reads answered 1..4 cycles after the handshake, counted as read-port.ts counts (one more). */
const HOST_LATENCY = { min: 2, max: 5 };

/**
 * The testbench of the receive path `ddp_rx_w<W>` / `rnic_rx_w<W>`: the peer's stream on s_axis,
 * responses out on m_axis, events out on m_evt, host memory, and drivers for the STag table, the
 * receive buffers, the ORQ (what the transmit side would push) and the failure and abort pulses.
 * Back-pressure on m_axis, m_evt and the memory ports is drawn from the run's stream.
 */
export class RxBench extends DutBench {
  readonly sAxis: AxisSource;
  readonly mAxis: AxisSink;
  readonly mem: HostMemoryPort;
  readonly wrPause: Chance;
  readonly stagCfg: RecordSource<RtlRegion>;
  readonly recv: RecordSource<{ addr: bigint; len: number }>;
  readonly orq: RecordSource<StepSideEffects['orq'][number]>;
  readonly evt: RecordSink<RxEvent>;
  private readonly h: (n: string) => PortHandle;
  private txBlocked = false;
  private pulse: { inject: number | null; abort: boolean } = { inject: null, abort: false };

  constructor(
    model: SimModel,
    readonly W: number,
    r: Prng,
    backpressure: number,
  ) {
    super(model, r);
    const m = model;
    const h = (this.h = (n: string) => m.handle(n));
    this.sAxis = this.source('s_axis', { pause: this.pause(backpressure) });
    this.mAxis = this.sink('m_axis', { pause: this.pause(backpressure) });
    this.wrPause = new Chance(r, backpressure);
    this.mem = this.memory({ width: W, wrPause: this.wrPause, rdPause: new Chance(r, backpressure), latency: HOST_LATENCY });
    // stag_cfg_ready: the STag table takes config writes after its init sweep (stag-table.ts);
    // RTL from before it had no ready and took every write.
    this.stagCfg = this.recordSource('stag_cfg', { ready: model.has('stag_cfg_ready') ? 'stag_cfg_ready' : null, fields: stagEntry });
    this.recv = this.recordSource('s_recv', { layout: RECV_BUFFER, fields: (b) => ({ ...b }) });
    this.orq = this.recordSource('s_orq', { layout: ORQ_ENTRY, fields: (o) => ({ ...o }) });
    this.evt = this.recordSink('m_evt', { pause: new Chance(r, backpressure), layout: RX_EVENT_FIELDS, map: (f, cycle) => ({ text: rtlEvent(f), cycle }) });
    // The contract the scoreboards cannot see: idle as a whole is idle on the receive side.
    const [idle, rxIdle] = [h('idle'), h('rx_idle')];
    this.invariant('idle is 1 while rx_idle is 0', () => m.peekPreNumber(idle) <= m.peekPreNumber(rxIdle));
    // And rx_idle means nothing received is still on its way: once it reads 1 with no event
    // offered, no event is offered until something new goes in (payload, a local fault, an abort).
    const [inValid, inReady, injectValid, abortReq, evtValid] = [h('s_axis_tvalid'), h('s_axis_tready'), h('inject_valid'), h('abort_req'), h('m_evt_valid')];
    let quiet = false;
    this.invariant('an event came out after rx_idle with nothing received since', () => {
      const offered = m.peekPreNumber(evtValid) === 1;
      const held = !(quiet && offered);
      const input = (m.peekPreNumber(inValid) & m.peekPreNumber(inReady)) | m.peekPreNumber(injectValid) | m.peekPreNumber(abortReq);
      quiet = !input && (quiet || (m.peekPreNumber(rxIdle) === 1 && !offered));
      return held;
    });
    this.add({
      drive: () => {
        m.pokeNumber(h('inject_valid'), this.pulse.inject !== null ? 1 : 0);
        m.pokeNumber(h('inject_err'), this.pulse.inject ?? 0);
        m.pokeNumber(h('abort_req'), this.pulse.abort ? 1 : 0);
        this.pulse = { inject: null, abort: false };
      },
    });
  }

  /** The events taken so far. */
  get events(): RxEvent[] {
    return this.evt.records;
  }

  /** A new stream: the QP's configuration (and its MPA layer, on rnic_rx), then a reset. */
  configure(c: { pd: number; ird: number; msn: number; mulpdu: number; bigEndian: boolean; mpa?: MpaStreamConfig & { seq: number } }): void {
    const m = this.model;
    // The ORQ entries come from the model's requester, which keeps its ORD.
    this.inputs('cfg').poke({ rfc7306: true, pd: c.pd, ird: c.ird, ord: IRD_ORD_NO_NEGOTIATE, initialMsn: c.msn >>> 0, mulpdu: c.mulpdu, bigEndian: c.bigEndian });
    for (const n of ['stag_cfg_valid', 's_recv_valid', 's_orq_valid', 'inject_valid', 'abort_req', 's_llp_err']) if (m.has(n)) m.pokeNumber(this.h(n), 0);
    if (c.mpa) this.inputs('mpa_cfg').poke({ markers: c.mpa.markers, crc: c.mpa.crc, s0: c.mpa.s0 & SEQ_LOW_BITS, seq: c.mpa.seq & SEQ_LOW_BITS, maxUlpdu: MAX_ULPDU_LENGTH });
    this.reset();
  }

  /** s_llp_err: the LLP code that goes with a ULPDU whose tuser is 0. */
  llpError(code: number): void {
    this.model.pokeNumber(this.h('s_llp_err'), code);
  }

  injectNext(err: number): void {
    this.pulse.inject = err;
  }

  abort(): void {
    this.pulse.abort = true;
  }

  /** Holds m_axis_tready low (the IRD overflow needs the responses to wait). */
  blockTx(on: boolean): void {
    this.txBlocked = on;
    this.mAxis.setPause(on ? { next: () => true } : never());
  }

  /** Runs until the RTL has nothing left to do (or, with m_axis blocked, nothing it can do). */
  settle(what: string): void {
    const m = this.model;
    const rxIdle = this.h('rx_idle');
    const idle = this.h('idle');
    const evtValid = this.h('m_evt_valid');
    const txValid = this.h('m_axis_tvalid');
    this.settleQuiet(
      () =>
        this.sAxis.idle && this.stagCfg.idle && this.recv.idle && this.orq.idle && this.mem.idle &&
        m.peekPreNumber(evtValid) === 0 && m.peekPreNumber(rxIdle) === 1 &&
        (this.txBlocked || (m.peekPreNumber(idle) === 1 && m.peekPreNumber(txValid) === 0)),
      400_000,
      `the receive path to settle after ${what} (${this.status()})`,
      this.mem,
    );
  }

  /** The status ports, for a hang report. */
  status(): string {
    const m = this.model;
    const names = ['idle', 'rx_idle', 'irrq_used', 'rx_stopped', 'tx_stopped', 'm_axis_tvalid', 'm_axis_tready', 'm_evt_valid', 's_axis_tready', 'mem_rd_valid', 'mem_wr_valid'];
    return names.map((n) => `${n}=${m.peekNumber(this.h(n))}`).join(' ') + ` source=${this.sAxis.idle ? 'idle' : 'busy'} mem=${this.mem.idle ? 'idle' : 'reading'} stag=${this.stagCfg.idle} recv=${this.recv.idle}/${this.recv.queue.length} orq=${this.orq.idle} txBlocked=${this.txBlocked}`;
  }

  get irrqUsed(): number {
    return this.model.peekNumber(this.h('irrq_used'));
  }
}
