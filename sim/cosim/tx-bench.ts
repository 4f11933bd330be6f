import type { AxisSink } from '../cocotb/axis';
import { withStalls } from '../cocotb/pause';
import { DutBench } from '../harness/dut-bench';
import type { HostMemoryPort } from '../harness/host-memory-port';
import type { BackgroundMemory } from '../harness/memory';
import type { DutOptions } from '../harness/open-dut';
import type { SimModel } from '../verilator/model';
import { UlpduStreamCheck } from './tx-ports';

/** The options of one run of a transmit block, `R` its requests. */
export interface TxBlockRunOptions<R> {
  readonly width: number;
  readonly requests: readonly R[];
  /** Host memory (the responder's atomics write back into it). */
  readonly memory: BackgroundMemory;
  readonly mulpdu: number;
  readonly initialMsn: number;
  readonly seed: number;
  /** Per-cycle probabilities (default 0.3; 0 = full rate). */
  readonly rdPause?: number;
  readonly sinkPause?: number;
  /** Read latency, uniform in [minLatency, maxLatency] cycles after the handshake (default 1..6). */
  readonly minLatency?: number;
  readonly maxLatency?: number;
  /** An open model of the block at `width` (reset first); otherwise one is opened and closed. */
  readonly model?: SimModel;
  readonly dut?: DutOptions;
}

/** What a run of a transmit block ends with. */
export interface TxRunEnd {
  readonly ulpdus: Uint8Array[];
  readonly violations: string[];
  /** The model's cycle count at each violation, at each ULPDU's last beat, and at the end. */
  readonly violationAt: number[];
  readonly ulpduAt: number[];
  readonly endCycle: number;
  /** Cycle of each request handshake and of each ULPDU's last beat (for rate checks). */
  readonly acceptedAt: number[];
  readonly lastBeatAt: number[];
  readonly idleAtEnd: boolean;
}

/**
 * What the fixtures of the two transmit blocks (ddp_tx_w<W>, rdmap_tx_resp_w<W>) share: host
 * memory behind their ports, the ULPDU stream on m_axis with its check, the handshake cycle of each
 * request, the violations with their cycles, and the end of a run.
 */
export abstract class TxBlockBench extends DutBench {
  abstract readonly mem: HostMemoryPort;
  readonly acceptedAt: number[] = [];
  readonly violations: string[] = [];
  readonly violationAt: number[] = [];
  private sink_: AxisSink | null = null;
  private stream_: UlpduStreamCheck | null = null;

  /** Keeps a violation (the first 50) with the cycle it was seen. */
  readonly report = (s: string): void => {
    if (this.violations.length >= 50) return;
    this.violations.push(s);
    this.violationAt.push(this.model.cycles);
  };

  /** The m_axis sink (its pause drawn from the stream now) and the stream check, W octets a beat. */
  protected ulpduStream(width: number, sinkPause = 0.3): void {
    // With back-pressure, now and then a stall of 600 cycles: the read FIFO behind m_axis fills.
    const pause = sinkPause > 0 ? withStalls(this.pause(sinkPause), this.pause(1 / 20_000), 600) : this.pause(0);
    this.sink_ = this.sink('m_axis', { pause });
    this.stream_ = this.add(new UlpduStreamCheck({ model: this.model, width, cycle: () => this.stepped, report: this.report }));
    // A block that offers a beat is not idle (the top's idle trusts this).
    const m = this.model;
    const [idle, valid] = [m.handle('idle'), m.handle('m_axis_tvalid')];
    this.invariant('idle is 1 while m_axis_tvalid is 1', () => (m.peekPreNumber(idle) & m.peekPreNumber(valid)) === 0);
  }

  get mAxis(): AxisSink {
    return this.sink_!;
  }

  /** Holds `inputs` low: a model used before keeps its last inputs, and nothing may be offered or taken during reset. */
  protected quiet(inputs: readonly string[]): void {
    for (const n of inputs) this.model.pokeNumber(this.model.handle(n), 0);
  }

  /**
   * Resets, runs until `done` holds (a run that does not get there within `budget` cycles is a
   * violation, not an exception) and 20 cycles more, so anything extra shows in the counts; then
   * closes the model unless `keepOpen`. `stepped`: the cycles it took to get there.
   */
  finish(done: () => boolean, budget: number, what: string, keepOpen: boolean): TxRunEnd & { readonly stepped: number } {
    const m = this.model;
    this.reset();
    try {
      this.until(done, budget, what);
    } catch (e) {
      this.report((e as Error).message);
    }
    const stepped = this.stepped;
    this.run(20);
    for (const b of this.broken) this.report(b);
    const inFlight = this.mem.reader!.inFlight;
    if (inFlight) this.report(`${inFlight} read(s) still pending at the end`);
    const idleAtEnd = m.peekNumber(m.handle('idle')) === 1;
    const endCycle = m.cycles;
    if (!keepOpen) this.close();
    const frames = this.mAxis.drain();
    return {
      ulpdus: frames.map((f) => f.data),
      violations: this.violations,
      violationAt: this.violationAt,
      ulpduAt: frames.map((f) => f.cycle!),
      endCycle,
      acceptedAt: this.acceptedAt,
      lastBeatAt: this.stream_!.lastBeatAt,
      idleAtEnd,
      stepped,
    };
  }
}
