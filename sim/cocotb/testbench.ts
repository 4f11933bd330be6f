/**
 * The per-DUT fixture (cocotb's `TB` class): owns the model, resets it, and steps every driver
 * and monitor in lock-step with the clock. One `cycle()`:
 *
 *   every component drives this cycle's inputs → model.tick() → every component samples the
 *   pre-edge snapshot (the values at the rising edge, which decide handshakes).
 *
 * Native channels (sim/verilator/channel.ts; `source`/`sink` with `native: true`) are no
 * components: the addon steps them inside the cycle, so with any open `cycle()` ticks through
 * `model.run(1)`: they drive after the TypeScript drivers and sample before the TypeScript samplers. With no TypeScript component at all, `run(n)` is one native
 * batch, and so is `until` given a native condition (a channel's `reaches`, e.g. `sink.received(n)`):
 * the addon stops after the very cycle the count is reached, so the cycles are those of stepping.
 *
 * The test owns time: nothing runs unless the test calls `cycle`, `run` or `until`.
 */
import type { Reaches } from '../verilator/channel';
import { MAX_TICK, type PortHandle, type SimModel } from '../verilator/model';
import { AxisMonitor } from './axis-monitor';
import { AxisSink, type AxisSinkOptions } from './axis-sink';
import { AxisSource, type AxisSourceOptions } from './axis-source';
import type { Component } from './component';
import { NativeAxisSink, type NativeAxisSinkOptions } from './native-axis-sink';
import { NativeAxisSource } from './native-axis-source';

export interface TestbenchOptions {
  /** Synchronous active-high reset port; default 'rst'. */
  readonly reset?: string;
}

export const DEFAULT_RESET_CYCLES = 4;

export class Testbench {
  readonly model: SimModel;
  private readonly drivers: Array<() => void> = [];
  private readonly samplers: Array<() => void> = [];
  private readonly rst: PortHandle | undefined;
  private readonly resetName: string;
  private steps = 0;
  /** Invariants that failed, "text (cycle N)", the first 20 (see `invariant`). */
  readonly broken: string[] = [];

  constructor(model: SimModel, opts: TestbenchOptions = {}) {
    this.model = model;
    this.resetName = opts.reset ?? 'rst';
    this.rst = model.has(this.resetName) ? model.handle(this.resetName) : undefined;
  }

  /** Adds a component to be stepped every cycle, in the order added. */
  add<T extends Component>(c: T): T {
    if (c.drive) this.drivers.push(c.drive.bind(c));
    if (c.sample) this.samplers.push(c.sample.bind(c));
    return c;
  }

  /** An AXI4-Stream source; with `native: true` its counterpart in the addon (native-axis-source.ts). */
  source(prefix: string, opts: AxisSourceOptions & { readonly native: true }): NativeAxisSource;
  source(prefix?: string, opts?: AxisSourceOptions & { readonly native?: false }): AxisSource;
  source(prefix = 's_axis', opts: AxisSourceOptions & { readonly native?: boolean } = {}): AxisSource | NativeAxisSource {
    return opts.native ? new NativeAxisSource(this.model, prefix, opts) : this.add(new AxisSource(this.model, prefix, opts));
  }

  /** An AXI4-Stream sink; with `native: true` its counterpart in the addon (native-axis-sink.ts). */
  sink(prefix: string, opts: NativeAxisSinkOptions & { readonly native: true }): NativeAxisSink;
  sink(prefix?: string, opts?: AxisSinkOptions & { readonly native?: false }): AxisSink;
  sink(prefix = 'm_axis', opts: NativeAxisSinkOptions & { readonly native?: boolean } = {}): AxisSink | NativeAxisSink {
    return opts.native ? new NativeAxisSink(this.model, prefix, opts) : this.add(new AxisSink(this.model, prefix, opts));
  }

  monitor(prefix: string): AxisMonitor {
    return this.add(new AxisMonitor(this.model, prefix));
  }

  /**
   * Checks `holds()` on every cycle's pre-edge snapshot (after reset); a cycle where it fails adds
   * "text (cycle N)" to `broken`. For a contract between outputs that no scoreboard sees, e.g. a
   * block that reports idle while a part of it is busy.
   */
  invariant(text: string, holds: () => boolean): void {
    this.add({ sample: () => void (!holds() && this.breaks(`${text} (cycle ${this.model.cycles})`)) });
  }

  /** Records a broken contract in `broken` (the first 20 are kept). */
  breaks(text: string): void {
    if (this.broken.length < 20) this.broken.push(text);
  }

  /** Holds reset high for `cycles` clock cycles, then releases it. Components are not stepped. */
  reset(cycles = DEFAULT_RESET_CYCLES): void {
    if (!this.rst) throw new Error(`${this.model.top} has no reset port ${this.resetName}; pass { reset: '<name>' } to the Testbench`);
    this.model.pokeNumber(this.rst, 1);
    this.model.tick(cycles);
    this.model.pokeNumber(this.rst, 0);
  }

  cycle(): void {
    const drivers = this.drivers;
    const samplers = this.samplers;
    for (let i = 0; i < drivers.length; i++) drivers[i]!();
    if (this.model.channelCount === 0) this.model.tick();
    else this.model.run(1);
    for (let i = 0; i < samplers.length; i++) samplers[i]!();
    this.steps++;
  }

  /** Only native channels to step: cycles can go in native batches. */
  private get batched(): boolean {
    return this.drivers.length === 0 && this.samplers.length === 0 && this.model.channelCount > 0;
  }

  /**
   * Cycles stepped with the components (reset not counted): while they sample a cycle, the cycles
   * before it, so the first cycle after reset is 0.
   */
  get stepped(): number {
    return this.steps;
  }

  run(cycles: number): void {
    if (!this.batched) {
      for (let i = 0; i < cycles; i++) this.cycle();
      return;
    }
    for (let left = cycles; left > 0; ) {
      const n = this.model.run(Math.min(left, MAX_TICK));
      this.steps += n;
      left -= n;
    }
  }

  /**
   * Steps until `done()` holds and returns the cycles it took; throws (never hangs) when it has not
   * after `maxCycles`, naming `what`.
   */
  until(done: (() => boolean) | Reaches, maxCycles: number, what = 'condition'): number {
    const stop = 'stop' in done ? done.stop : undefined;
    if (stop && this.batched) {
      // The addon stops after the cycle the count reaches the target: the cycle done() first holds.
      let i = 0;
      while (!done() && i < maxCycles) {
        const n = this.model.run(Math.min(maxCycles - i, MAX_TICK), stop);
        this.steps += n;
        i += n;
      }
      if (done()) return i;
      throw new Error(`${what} not reached within ${maxCycles} cycles (at cycle ${this.model.cycles} of ${this.model.top})`);
    }
    for (let i = 0; i < maxCycles; i++) {
      if (done()) return i;
      this.cycle();
    }
    if (done()) return maxCycles;
    throw new Error(`${what} not reached within ${maxCycles} cycles (at cycle ${this.model.cycles} of ${this.model.top})`);
  }

  close(): void {
    this.model.close();
  }
}
