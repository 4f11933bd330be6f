import type { ModuleSources } from '../../hdl-gen/gen/sources';
import { prng, type Prng } from '../../ts-model/util/prng';
import { random as randomPause, type PauseGen } from '../cocotb/pause';
import { RecordGroup, type Fields } from '../cocotb/record-group';
import { RecordMonitor, RecordSink, type RecordMonitorOptions, type RecordSinkOptions } from '../cocotb/record-sink';
import { RecordSource, type RecordSourceOptions } from '../cocotb/record-source';
import { NativeRecordSink } from '../cocotb/native-record-sink';
import type { Sampled } from '../cocotb/record-group';
import { Testbench } from '../cocotb/testbench';
import type { CompiledModel } from '../verilator/build';
import type { SimModel } from '../verilator/model';
import { HostMemoryPort, type HostMemoryPortOptions } from './host-memory-port';
import { openDut, type DutOptions } from './open-dut';
import { RunTimer } from './run-timer';

/**
 * The base of every DUT's testbench fixture (cocotb's `TB` class): the Verilated module, opened
 * (open-dut.ts) or handed in, its Testbench (clock, reset, components in lock-step), the run's
 * seeded random stream, and builders for the parts a harness puts around a DUT: AXI4-Stream
 * sources and sinks (Testbench), record sources, sinks and monitors on the module's own port list
 * (so fields carrying a record are encoded by its layout), and host memory. A harness's fixture
 * extends it with that DUT's ports; its workload and scoreboard stay in the harness.
 *
 * The random stream is drawn in the order the harness asks: `pause(p)` takes one draw to seed a
 * pause generator, `memory(…)` and record fillers draw as the run goes.
 */
export class DutBench extends Testbench {
  readonly r: Prng;
  /** Where the Verilog came from ('generated' or the --rtl directory), when this bench opened it. */
  readonly src: ModuleSources | null;
  readonly compiled: CompiledModel | null;

  /** `rng`: the run's seed, or a stream the caller shares with its workload. */
  constructor(model: SimModel, rng: number | Prng, opened?: { readonly src: ModuleSources; readonly compiled: CompiledModel }) {
    super(model);
    this.r = typeof rng === 'number' ? prng(rng) : rng;
    this.src = opened?.src ?? null;
    this.compiled = opened?.compiled ?? null;
  }

  /**
   * The constructor's arguments for `module`, built (or reused) and opened fresh: a fixture's
   * constructor opens its DUT with `super(...DutBench.opening(module, seed, dut))`.
   */
  static opening(module: string, seed: number, dut: DutOptions = {}): [SimModel, number, { src: ModuleSources; compiled: CompiledModel }] {
    const { src, compiled, model } = openDut(module, dut);
    return [model, seed, { src, compiled }];
  }

  /** 'generated', or the user's RTL directory. */
  get origin(): string {
    return this.src?.origin ?? 'generated';
  }

  /**
   * A pause generator pausing with probability `p`, seeded from the bench's stream. A `p` drawn
   * from the stream too is given as a function: the seed is drawn first.
   */
  pause(p: number | (() => number)): PauseGen {
    const seed = this.r.u32();
    return randomPause(seed, typeof p === 'function' ? p() : p);
  }

  private ports() {
    return this.src ? { ports: this.src.ports } : {};
  }

  /** A valid/ready source of records on the ports `<prefix>_<field>` (record-source.ts). */
  recordSource<T = Fields>(prefix: string, o: RecordSourceOptions<T> = {}): RecordSource<T> {
    return this.add(new RecordSource<T>(this.model, prefix, { ...this.ports(), ...o }));
  }

  /**
   * Takes the records the DUT puts out on `<prefix>_<field>`, driving ready (record-sink.ts); with
   * `native: true`, its counterpart in the addon (native-record-sink.ts).
   */
  recordSink<T = Sampled>(prefix: string, o: RecordSinkOptions<T> & { readonly native: true }): NativeRecordSink<T>;
  recordSink<T = Sampled>(prefix: string, o?: RecordSinkOptions<T> & { readonly native?: false }): RecordSink<T>;
  recordSink<T = Sampled>(prefix: string, o: RecordSinkOptions<T> & { readonly native?: boolean } = {}): RecordSink<T> | NativeRecordSink<T> {
    const { native, ...opts } = o;
    if (native) return new NativeRecordSink<T>(this.model, prefix, { ...this.ports(), ...opts });
    return this.add(new RecordSink<T>(this.model, prefix, { ...this.ports(), ...opts }));
  }

  /** Watches the records on `<prefix>_<field>` without driving anything. */
  recordMonitor<T = Sampled>(prefix: string, o: RecordMonitorOptions<T> = {}): RecordMonitor<T> {
    return this.add(new RecordMonitor<T>(this.model, prefix, { ...this.ports(), ...o }));
  }

  /** The input ports `<prefix>_<field>` (configuration ports, pulses), to drive as one record. */
  inputs(prefix: string, exclude: readonly string[] = []): RecordGroup {
    return new RecordGroup(this.model, prefix, { ...this.ports(), exclude });
  }

  /** Host memory behind the DUT's memory ports, drawing its latencies from the bench's stream. */
  memory(o: HostMemoryPortOptions): HostMemoryPort {
    return this.add(new HostMemoryPort(this.model, this.r, o));
  }

  /**
   * Steps until `quiet()` has held `calm` cycles in a row (nothing in flight that could still show)
   * and returns; throws after `maxCycles`, naming `what`. Host memory writes count as activity.
   */
  settleQuiet(quiet: () => boolean, maxCycles: number, what: string, memory?: { readonly writes: readonly unknown[] }, calm = 8): void {
    let n = 0;
    let writes = memory?.writes.length ?? 0;
    this.until(() => {
      const still = quiet() && (memory?.writes.length ?? 0) === writes;
      writes = memory?.writes.length ?? 0;
      n = still ? n + 1 : 0;
      return n >= calm;
    }, maxCycles, what);
  }

  /** Starts timing a run (cycles and wall time). */
  timer(): RunTimer {
    return new RunTimer(this.model);
  }
}
