/**
 * The per-DUT fixture (cocotb's `TB` class): owns the model, resets it, and steps every driver
 * and monitor in lock-step with the clock. One `cycle()`:
 *
 *   every component drives this cycle's inputs → model.tick() → every component samples the
 *   pre-edge snapshot (the values at the rising edge, which decide handshakes).
 *
 * The test owns time: nothing runs unless the test calls `cycle`, `run` or `until`.
 */
import type { PortHandle, SimModel } from '../verilator/model';
import { AxisMonitor } from './axis-monitor';
import { AxisSink, type AxisSinkOptions } from './axis-sink';
import { AxisSource, type AxisSourceOptions } from './axis-source';
import type { Component } from './component';

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

  source(prefix = 's_axis', opts: AxisSourceOptions = {}): AxisSource {
    return this.add(new AxisSource(this.model, prefix, opts));
  }

  sink(prefix = 'm_axis', opts: AxisSinkOptions = {}): AxisSink {
    return this.add(new AxisSink(this.model, prefix, opts));
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
    this.add({ sample: () => void (!holds() && this.broken.length < 20 && this.broken.push(`${text} (cycle ${this.model.cycles})`)) });
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
    this.model.tick();
    for (let i = 0; i < samplers.length; i++) samplers[i]!();
    this.steps++;
  }

  /**
   * Cycles stepped with the components (reset not counted): while they sample a cycle, the cycles
   * before it, so the first cycle after reset is 0.
   */
  get stepped(): number {
    return this.steps;
  }

  run(cycles: number): void {
    for (let i = 0; i < cycles; i++) this.cycle();
  }

  /**
   * Steps until `done()` holds and returns the cycles it took; throws (never hangs) when it has not
   * after `maxCycles`, naming `what`.
   */
  until(done: () => boolean, maxCycles: number, what = 'condition'): number {
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
