/**
 * Native valid/ready channels: drivers that live in the addon (channels-cpp.ts) and are stepped
 * inside `SimModel.run`, so a batch of cycles costs one native call instead of one per cycle plus
 * TypeScript per component. This file is the TypeScript end: it turns port handles into the word
 * offsets the C++ works on, stages a source's items and hands them over in bulk, encodes pause
 * generators (sim/cocotb/pause.ts `state()`) and reads the counters and a sink's log.
 *
 * The protocol-level drivers (AxisSource-like, RecordSink-like) are built on these in sim/cocotb.
 */
import type { PauseGen } from '../cocotb/pause';
import type { PortHandle, SimModel } from './model';
import type { NativeInstance } from './native';

/** Counters in a channel's status array, which C++ updates in place. */
export const STATUS_ITEMS = 0;
export const STATUS_FRAMES = 1;
export const STATUS_LAST_FRAME_CYCLE = 2;
const STATUS_WORDS = 3;
/** A sink log entry: the cycle (two words) before the payload. */
export const LOG_CYCLE_WORDS = 2;
const NONE = 0xffffffff;
const WORD_RANGE = 2 ** 32;
/** A source hands its staged items to C++ once this many words have piled up (and before any run). */
const FLUSH_WORDS = 1 << 16;

/** Stop `SimModel.run` after the cycle in which a channel's counter reaches `target`. */
export interface RunStop {
  readonly channel: number;
  /** STATUS_ITEMS or STATUS_FRAMES. */
  readonly field: number;
  readonly target: number;
}

/** A condition a Testbench can step per cycle or hand to `SimModel.run` as a native stop. */
export type Reaches = (() => boolean) & { readonly stop: RunStop };

/** The calls SimModel lends a channel. */
export type ChannelCalls = Pick<NativeInstance, 'push' | 'pause' | 'drain'>;

export interface ChannelPorts {
  readonly valid: PortHandle;
  /** A source without ready has every item taken at once. */
  readonly ready: PortHandle | null;
  /** The payload ports, in the order an item's words go. */
  readonly payload: readonly PortHandle[];
}

const PAUSE_KINDS = { never: 0, always: 1, every: 2, pattern: 3, random: 4 } as const;

abstract class NativeChannel {
  readonly id: number;
  /** Words of one item: the payload ports' words back to back. */
  readonly itemWords: number;
  protected readonly status = new Float64Array(STATUS_WORDS);
  protected readonly calls: ChannelCalls;

  protected constructor(
    protected readonly model: SimModel,
    source: boolean,
    ports: ChannelPorts,
    pause: PauseGen,
    lastWord: number,
    flush: () => void,
  ) {
    const [inside, outside] = source ? (['input', 'output'] as const) : (['output', 'input'] as const);
    const what = source ? 'a native source' : 'a native sink';
    for (const p of [ports.valid, ...ports.payload]) if (p.direction !== inside) throw new Error(`${what} needs ${p.name} to be a DUT ${inside}`);
    if (ports.ready && ports.ready.direction !== outside) throw new Error(`${what} needs ${ports.ready.name} to be a DUT ${outside}`);
    // A source writes valid and payload (now) and reads ready (pre); a sink the other way round.
    const at = (p: PortHandle, write: boolean): number => (write ? p.offset : p.preOffset);
    const config = [at(ports.valid, source), ports.ready ? at(ports.ready, !source) : NONE, lastWord, ports.payload.length];
    for (const p of ports.payload) config.push(at(p, source), p.words);
    this.itemWords = ports.payload.reduce((n, p) => n + p.words, 0);
    const opened = model.openChannel(source, Uint32Array.from(config), this.status, flush);
    this.id = opened.id;
    this.calls = opened.calls;
    this.setPause(pause);
  }

  /** Items taken so far (beats, records). */
  get items(): number {
    return this.status[STATUS_ITEMS]!;
  }

  /** Items taken that end a frame. */
  get frames(): number {
    return this.status[STATUS_FRAMES]!;
  }

  /** The model's cycle count when the last frame ended (0 before the first). */
  get lastFrameCycle(): number {
    return this.status[STATUS_LAST_FRAME_CYCLE]!;
  }

  /**
   * The pause from the next cycle on, carried on in C++ from where `pause` stands: the generators
   * of sim/cocotb/pause.ts that have `state()` (never, always, every, pattern, random).
   */
  setPause(pause: PauseGen): void {
    const st = pause.state?.();
    if (!st) throw new Error('a native channel takes the pause generators of sim/cocotb/pause.ts that C++ replays (never, always, every, pattern, random), not this one');
    const kind = PAUSE_KINDS[st.kind];
    const none = new Uint8Array(0);
    switch (st.kind) {
      case 'never':
      case 'always':
        return this.calls.pause(this.id, kind, 1, 0, 0, 0, none);
      case 'every':
        return this.calls.pause(this.id, kind, st.n, st.i, 0, 0, none);
      case 'pattern':
        return this.calls.pause(this.id, kind, 1, st.i, 0, 0, Uint8Array.from(st.bits, (b) => (b ? 1 : 0)));
      case 'random':
        return this.calls.pause(this.id, kind, 1, 0, st.s, st.threshold, none);
    }
  }

  /** `() => counter ≥ target`, which `Testbench.until` can also run natively (a RunStop). */
  reaches(counter: typeof STATUS_ITEMS | typeof STATUS_FRAMES, target: number): Reaches {
    const status = this.status;
    return Object.assign(() => status[counter]! >= target, { stop: { channel: this.id, field: counter, target } });
  }
}

/** Items queued in TypeScript, offered by C++ (see channels-cpp.ts for the per-cycle rule). */
export class NativeSourceChannel extends NativeChannel {
  private words = new Uint32Array(FLUSH_WORDS * 2);
  private octets = new Uint8Array(this.words.buffer);
  private ends = new Uint8Array(64);
  private staged = 0;
  private queued = 0;

  constructor(model: SimModel, ports: ChannelPorts, pause: PauseGen) {
    let self: NativeSourceChannel | undefined;
    super(model, true, ports, pause, NONE, () => self?.flush());
    self = this;
  }

  /** Items queued since construction (taken or not). */
  get queuedCount(): number {
    return this.queued;
  }

  /**
   * Room for one more item, zeroed: returns the word index in `stage` (and ×4 in `stageOctets`)
   * where its payload goes. `end`: it ends a frame.
   */
  item(end: boolean): number {
    if (this.staged * this.itemWords >= FLUSH_WORDS) this.flush();
    const at = this.staged * this.itemWords;
    if (at + this.itemWords > this.words.length) {
      const bigger = new Uint32Array((at + this.itemWords) * 2);
      bigger.set(this.words.subarray(0, at));
      this.words = bigger;
      this.octets = new Uint8Array(bigger.buffer);
    }
    if (this.staged === this.ends.length) {
      const bigger = new Uint8Array(this.ends.length * 2);
      bigger.set(this.ends);
      this.ends = bigger;
    }
    this.words.fill(0, at, at + this.itemWords);
    this.ends[this.staged++] = end ? 1 : 0;
    this.queued++;
    return at;
  }

  /** The staging words: valid until the next `item` call. */
  get stage(): Uint32Array {
    return this.words;
  }

  get stageOctets(): Uint8Array {
    return this.octets;
  }

  /** Hands the staged items to C++ (SimModel does before every run). */
  flush(): void {
    if (this.staged === 0) return;
    this.calls.push(this.id, this.words.subarray(0, this.staged * this.itemWords), this.ends.subarray(0, this.staged));
    this.staged = 0;
  }
}

/** Ready from a pause, and a log of the items taken that TypeScript drains. */
export class NativeSinkChannel extends NativeChannel {
  /**
   * `last`: the payload port whose non-zero value ends a frame (tlast); without it every item
   * does.
   */
  constructor(model: SimModel, ports: ChannelPorts & { readonly last?: PortHandle }, pause: PauseGen) {
    if (!ports.ready) throw new Error(`a native sink drives ready: ${ports.valid.name} needs one`);
    let lastWord = NONE;
    if (ports.last) {
      const i = ports.payload.indexOf(ports.last);
      if (i < 0) throw new Error(`${ports.last.name} is not in the payload`);
      lastWord = ports.payload.slice(0, i).reduce((n, p) => n + p.words, 0);
    }
    super(model, false, ports, pause, lastWord, () => {});
  }

  /** Items taken since the last drain: `LOG_CYCLE_WORDS + itemWords` words each. */
  drain(): Uint32Array {
    return new Uint32Array(this.calls.drain(this.id));
  }

  /** The cycle of the entry at `at` in a drained log. */
  static cycleAt(log: Uint32Array, at: number): number {
    return log[at]! + log[at + 1]! * WORD_RANGE;
  }
}
