/**
 * A Verilated model in-process, stepped by the test.
 *
 * Ports live in one shared buffer (layout.ts): pokes and peeks are plain array accesses, and the
 * only native calls are `eval`, `tick(n)`, tracing and `close`. The recommended loop:
 *
 *   poke this cycle's inputs → tick() → read the pre-edge snapshot (peekPre…) to decide which
 *   handshakes happened at the rising edge; peek… gives the values after the edge.
 *
 * A model behind the sampled-inputs shim defers each tick's rising edge to the next tick, so the
 * logic settles once per cycle, not twice (wrapper-gen.ts). Reading an output with peek… takes the
 * pending edge first, at the cost of that second settling; a loop that reads only peekPre… never
 * pays it.
 *
 * Handles (`handle(name)`) carry the word offsets, so drivers on the hot path can use
 * `pokeNumber`/`peekPreNumber` or index `words`/`bytes` directly without name lookups or BigInt.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { traceFormatOf, type CompiledModel } from './build';
import { CYCLES_WORD, DEFERRED_WORD, FINISH_WORD, OCTETS_PER_WORD, layoutPorts, type PortSlot } from './layout';
import type { ChannelCalls, RunStop } from './channel';
import { loadAddon, type NativeInstance } from './native';
import { WORD_BITS, octetsFor, type PortSpec } from './port-spec';
import { decodeBigInt, encodePortValue, type PortValue } from './port-values';

export interface PortHandle extends PortSlot {
  /** Octet index of the current value in `SimModel.bytes`. */
  readonly byteOffset: number;
  /** Octet index of the pre-edge value in `SimModel.bytes`. */
  readonly preByteOffset: number;
  /** Octets `peekBytes` returns: ceil(width / 8). */
  readonly octets: number;
}

export type PortRef = string | PortHandle;
export type { PortValue };

/** Largest cycle count one native `tick` call accepts (it reads n as uint32). */
export const MAX_TICK = 0xffffffff;

/** The cycles a waveform holds: [from, to), `to` open when not given. */
export interface TraceWindow {
  readonly from?: number;
  readonly to?: number;
}

export class SimModel {
  readonly top: string;
  /** The ports in the order they were listed when the model was built. */
  readonly ports: readonly PortSpec[];
  /** Whether the model was built with trace, so `waveform()` works. */
  readonly traceable: boolean;
  /** The waveform format it writes ('vcd' or 'fst'), or null without trace. */
  readonly traceFormat: 'vcd' | 'fst' | null;
  /** The shared buffer as 32-bit words: the raw fast path for drivers (see layout.ts). */
  readonly words: Uint32Array;
  /** The same buffer as octets (little-endian within each word). */
  readonly bytes: Uint8Array;
  private readonly status: Float64Array;
  private readonly native: NativeInstance;
  private readonly byName: ReadonlyMap<string, PortHandle>;
  /** What each native channel has staged and must hand over before a run (channel.ts). */
  private readonly flushes: Array<() => void> = [];
  private closed = false;

  /**
   * Loads a model built by `buildModel` (or the path of its addon). `plusargs` ("+NAME=value") are
   * the simulator command line its initial blocks read with $test$plusargs / $value$plusargs.
   */
  static open(model: CompiledModel | string, opts: { readonly plusargs?: readonly string[] } = {}): SimModel {
    return new SimModel(typeof model === 'string' ? model : model.path, opts.plusargs ?? []);
  }

  private constructor(file: string, plusargs: readonly string[]) {
    const { addon, ports } = loadAddon(file);
    const layout = layoutPorts(ports);
    if (layout.totalWords !== addon.totalWords) throw new Error(`${file}: buffer layout disagrees with the addon (${layout.totalWords} vs ${addon.totalWords} words)`);
    this.top = addon.top;
    this.ports = ports;
    this.traceable = addon.trace;
    this.traceFormat = addon.trace ? addon.traceFormat ?? 'vcd' : null;
    const buffer = new ArrayBuffer(layout.totalWords * OCTETS_PER_WORD);
    this.words = new Uint32Array(buffer);
    this.bytes = new Uint8Array(buffer);
    this.status = new Float64Array(buffer, CYCLES_WORD * OCTETS_PER_WORD, 1);
    this.byName = new Map(
      layout.slots.map((s) => [
        s.name,
        Object.freeze({ ...s, byteOffset: s.offset * OCTETS_PER_WORD, preByteOffset: s.preOffset * OCTETS_PER_WORD, octets: octetsFor(s.width) }),
      ]),
    );
    for (const a of plusargs) if (!/^\+[A-Za-z_][\w]*(=.*)?$/.test(a)) throw new Error(`plusarg ${JSON.stringify(a)} is not of the form +NAME or +NAME=value`);
    this.native = addon.create(buffer, plusargs);
  }

  /** The handle of a port: resolve once, then use it on the hot path. */
  handle(name: string): PortHandle {
    const h = this.byName.get(name);
    if (!h) throw new Error(`unknown port ${name} on ${this.top} (ports: ${[...this.byName.keys()].join(', ')})`);
    return h;
  }

  /** Whether the model has a port of this name (optional AXI-Stream signals, for instance). */
  has(name: string): boolean {
    return this.byName.has(name);
  }

  private resolve(port: PortRef): PortHandle {
    if (typeof port === 'string') return this.handle(port);
    if (this.byName.get(port.name) !== port) throw new Error(`handle for ${port.name} does not belong to model ${this.top}`);
    return port;
  }

  private input(port: PortRef): PortHandle {
    const h = this.resolve(port);
    if (h.direction !== 'input') throw new Error(`port ${h.name} of ${this.top} is an output: it cannot be poked`);
    return h;
  }

  private narrow(h: PortHandle, what: string): void {
    if (h.width > WORD_BITS) throw new RangeError(`${what}: port ${h.name} is ${h.width} bits, wider than ${WORD_BITS}; use the bigint or bytes variant`);
  }

  /** Sets an input for the next eval/tick. Octets are little-endian (octet 0 = bits 7:0). */
  poke(port: PortRef, value: PortValue): void {
    const h = this.input(port);
    encodePortValue(this.words, this.bytes, h.offset, h, value);
  }

  /** Sets an input of at most 32 bits from a plain number: the allocation-free path for drivers. */
  pokeNumber(h: PortHandle, n: number): void {
    if (h.direction !== 'input') throw new Error(`port ${h.name} of ${this.top} is an output: it cannot be poked`);
    this.narrow(h, 'pokeNumber');
    if (n >>> 0 !== n || n > h.topMask) throw new RangeError(`value ${n} does not fit port ${h.name} (${h.width} bits)`);
    this.words[h.offset] = n;
  }

  /** The value after the last rising edge (taking it first if the tick deferred it). */
  peek(port: PortRef): bigint {
    const h = this.current(this.resolve(port));
    return decodeBigInt(this.words, h.offset, h.words);
  }

  peekNumber(h: PortHandle): number {
    this.narrow(h, 'peekNumber');
    return this.words[this.current(h).offset]!;
  }

  /** The value as ceil(width/8) little-endian octets (a copy). */
  peekBytes(port: PortRef): Uint8Array {
    const h = this.current(this.resolve(port));
    return this.bytes.slice(h.byteOffset, h.byteOffset + h.octets);
  }

  /** An output's `now` slot is stale while the last edge is deferred: take the edge first. */
  private current(h: PortHandle): PortHandle {
    if (h.direction === 'output' && this.words[DEFERRED_WORD] !== 0) this.native.commit();
    return h;
  }

  /** The value at the last rising edge (end of the last tick's low phase). */
  peekPre(port: PortRef): bigint {
    const h = this.resolve(port);
    return decodeBigInt(this.words, h.preOffset, h.words);
  }

  peekPreNumber(h: PortHandle): number {
    this.narrow(h, 'peekPreNumber');
    return this.words[h.preOffset]!;
  }

  peekPreBytes(port: PortRef): Uint8Array {
    const h = this.resolve(port);
    return this.bytes.slice(h.preByteOffset, h.preByteOffset + h.octets);
  }

  /** Settles combinational logic on the current inputs (clock included) without a clock edge. */
  eval(): void {
    this.native.eval();
  }

  /** Runs n clock cycles with the current inputs; see the file comment for what is sampled when. */
  tick(n = 1): void {
    if (n !== 1 && (!Number.isInteger(n) || n < 0 || n > MAX_TICK)) throw new RangeError(`tick(${n}): n must be an integer in [0, ${MAX_TICK}]`);
    if (n !== 0) this.native.tick(n);
  }

  /**
   * Runs up to n cycles with the native channels (channel.ts) stepped in each, as a Testbench
   * cycle steps its components: they drive → one cycle exactly as `tick()` → they sample `pre`.
   * With `stop`, returns after the cycle in which that counter reaches its target. Returns the
   * cycles run. Unlike `tick(n)`, `pre` is taken every cycle.
   */
  run(n: number, stop?: RunStop): number {
    if (!Number.isInteger(n) || n < 0 || n > MAX_TICK) throw new RangeError(`run(${n}): n must be an integer in [0, ${MAX_TICK}]`);
    const flushes = this.flushes;
    for (let i = 0; i < flushes.length; i++) flushes[i]!();
    if (n === 0) return 0;
    return stop ? this.native.run(n, stop.channel, stop.field, stop.target) : this.native.run(n);
  }

  /** Native channels opened on this model: a Testbench then steps with `run`, not `tick`. */
  get channelCount(): number {
    return this.flushes.length;
  }

  /** Opens a native channel (for channel.ts): its id and the addon calls it uses. */
  openChannel(source: boolean, config: Uint32Array, status: Float64Array, flush: () => void): { id: number; calls: ChannelCalls } {
    const id = this.native.channel(source, config, status);
    this.flushes.push(flush);
    const native = this.native;
    return { id, calls: { push: (...a) => native.push(...a), pause: (...a) => native.pause(...a), drain: (...a) => native.drain(...a) } };
  }

  /** Cycles ticked so far (rising edges, counting one the last tick may have deferred). */
  get cycles(): number {
    return this.status[0]!;
  }

  /** Whether the RTL has executed `$finish`. */
  get gotFinish(): boolean {
    return this.words[FINISH_WORD] !== 0;
  }

  /**
   * Starts writing a waveform of every signal (replacing any open one), in the format the model
   * was built for (`.fst` or `.vcd`, which the file's name must match): from the next tick on, or
   * only the cycles of `window` ([from, to); the file closes at `to`).
   */
  waveform(file: string, window: TraceWindow = {}): void {
    if (!this.traceable) throw new Error(`model ${this.top} was built without trace: true, so it cannot write a VCD; rebuild with buildModel({ …, trace: true })`);
    if (traceFormatOf(file) !== this.traceFormat) throw new Error(`${file}: model ${this.top} writes ${this.traceFormat!.toUpperCase()}, so the file must end in .${this.traceFormat}`);
    mkdirSync(path.dirname(file), { recursive: true });
    this.native.traceOn(file, window.from ?? 0, window.to ?? -1);
  }

  /** Closes the waveform, if one is open. */
  waveformOff(): void {
    this.native.traceOff();
  }

  /** Runs `final` blocks and closes the VCD; the model cannot be stepped afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.native.finish();
  }
}
