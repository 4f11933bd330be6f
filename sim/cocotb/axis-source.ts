/**
 * Drives an AXI4-Stream interface into the DUT (its `s_axis_*` inputs) from a queue of frames.
 *
 * AXI4-Stream rules it keeps (ARM IHI 0051, §2.2.1): tvalid never waits for tready, and once
 * tvalid is high the payload stays stable until the handshake. The pause generator only decides
 * whether a new beat starts; it never withdraws one already offered.
 *
 * The hot path (`drive`/`sample`, once per cycle) writes the shared buffer directly and allocates
 * nothing; frames are split into beats on the fly.
 */
import type { PortHandle, SimModel } from '../verilator/model';
import { encodePortValue } from '../verilator/port-values';
import { axisBus, type AxisBus, type AxisUser } from './axis-bus';
import type { Component } from './component';
import { never, type PauseGen } from './pause';

export interface AxisSourceOptions {
  readonly pause?: PauseGen;
}

/** A frame's sideband: tuser and TID, each 0 when not given. */
export interface AxisSideband {
  readonly tuser?: AxisUser;
  readonly tid?: number;
}

/** One explicitly shaped beat for `sendBeats`. */
export interface AxisSendBeat {
  /** Up to `octets` lanes, lane 0 first; missing lanes are driven as zero. */
  readonly data: Uint8Array;
  /** Default: the first `data.length` lanes. Any pattern is allowed (sparse, null beats). */
  readonly tkeep?: number | bigint;
  /** Default: true on the last beat of the `sendBeats` call. */
  readonly tlast?: boolean;
  readonly tuser?: AxisUser;
  readonly tid?: number;
}

interface PreparedBeat {
  readonly data: Uint8Array;
  readonly keep: Uint32Array;
  readonly last: boolean;
  readonly user: Uint32Array;
  readonly id: Uint32Array;
}

/** A frame split into beats as it goes (`beats` undefined) or a list of prepared beats. */
interface QueueItem {
  readonly data: Uint8Array;
  readonly user: Uint32Array;
  readonly id: Uint32Array;
  readonly beats: readonly PreparedBeat[] | undefined;
  /** Called in the cycle the frame's last beat is accepted. */
  readonly taken: (() => void) | undefined;
}

const WORD_BITS = 32;
const ALL_ONES = 0xffffffff;
/** Drop consumed queue entries once this many have piled up at the front. */
const COMPACT_AFTER = 1024;

/** Writes `value` as the words of `port` (validated against its width), for later copying. */
function wordsOf(port: PortHandle | undefined, value: number | bigint, what: string): Uint32Array {
  if (!port) {
    if (value !== 0 && value !== 0n) throw new Error(`${what}: the interface has no such port to carry ${value}`);
    return new Uint32Array(0);
  }
  const words = new Uint32Array(port.words);
  encodePortValue(words, new Uint8Array(words.buffer), 0, port, value);
  return words;
}

export class AxisSource implements Component {
  readonly bus: AxisBus;
  private pause: PauseGen;
  private readonly queue: QueueItem[] = [];
  private head = 0;
  /** Octet position in the current frame, or beat index in the current beat list. */
  private cursor = 0;
  /** Octets (or 1 beat) the beat on the bus will consume when accepted. */
  private step = 0;
  private offering = false;
  private sent = 0;
  private readonly words: Uint32Array;
  private readonly bytes: Uint8Array;

  constructor(model: SimModel, prefix = 's_axis', opts: AxisSourceOptions = {}) {
    this.bus = axisBus(model, prefix);
    for (const h of [this.bus.tdata, this.bus.tvalid, this.bus.tkeep, this.bus.tlast, this.bus.tuser, this.bus.tid]) {
      if (h && h.direction !== 'input') throw new Error(`AxisSource drives ${h.name}, but it is a DUT output: is ${prefix} the right prefix?`);
    }
    this.pause = opts.pause ?? never();
    this.words = model.words;
    this.bytes = model.bytes;
  }

  setPause(pause: PauseGen): void {
    this.pause = pause;
  }

  /**
   * Queues a frame; it goes out in full beats with contiguous tkeep, tuser and tid on every beat.
   * `sideband` is the frame's tuser, or its tuser and TID; `taken` is called in the cycle its last
   * beat is accepted (when the DUT has all of it: a capture's timestamp).
   */
  send(data: Uint8Array, sideband: AxisUser | AxisSideband = 0, taken?: () => void): void {
    if (data.length === 0) throw new RangeError(`${this.bus.prefix}: an empty frame has no beats; use sendBeats for a null beat`);
    const { tuser = 0, tid = 0 } = typeof sideband === 'object' ? sideband : { tuser: sideband };
    this.queue.push({ data, user: wordsOf(this.bus.tuser, tuser, `${this.bus.prefix} tuser`), id: wordsOf(this.bus.tid, tid, `${this.bus.prefix} tid`), beats: undefined, taken });
  }

  /** Queues beats exactly as given (any tkeep pattern); they form one frame if the last has tlast. */
  sendBeats(beats: readonly AxisSendBeat[]): void {
    if (beats.length === 0) return;
    const { octets, tkeep, tlast, prefix } = this.bus;
    const prepared = beats.map((b, i): PreparedBeat => {
      if (b.data.length > octets) throw new RangeError(`${prefix}: beat ${i} has ${b.data.length} octets, the interface carries ${octets}`);
      const keep = b.tkeep ?? (b.data.length === octets ? (1n << BigInt(octets)) - 1n : (1n << BigInt(b.data.length)) - 1n);
      const last = b.tlast ?? i === beats.length - 1;
      if (!tlast && b.tlast !== undefined) throw new Error(`${prefix}: the interface has no tlast port`);
      const data = new Uint8Array(octets);
      data.set(b.data);
      const keepWords = tkeep ? wordsOf(tkeep, keep, `${prefix} tkeep`) : new Uint32Array(0);
      return { data, keep: keepWords, last, user: wordsOf(this.bus.tuser, b.tuser ?? 0, `${prefix} tuser`), id: wordsOf(this.bus.tid, b.tid ?? 0, `${prefix} tid`) };
    });
    this.queue.push({ data: new Uint8Array(0), user: new Uint32Array(0), id: new Uint32Array(0), beats: prepared, taken: undefined });
  }

  /** Frames (or beat lists) queued and not yet fully accepted. */
  get pending(): number {
    return this.queue.length - this.head;
  }

  /** Frames (or beat lists) fully accepted by the DUT. */
  get sentCount(): number {
    return this.sent;
  }

  /** Nothing queued and nothing offered. */
  get idle(): boolean {
    return this.head === this.queue.length && !this.offering;
  }

  drive(): void {
    const paused = this.pause.next();
    if (this.offering) return; // AXI: a beat once offered stays until accepted
    if (paused || this.head === this.queue.length) {
      this.words[this.bus.tvalid.offset] = 0;
      return;
    }
    this.load(this.queue[this.head]!);
    this.words[this.bus.tvalid.offset] = 1;
    this.offering = true;
  }

  sample(): void {
    if (!this.offering || this.words[this.bus.tready.preOffset] === 0) return;
    this.offering = false;
    const item = this.queue[this.head]!;
    this.cursor += this.step;
    if (this.cursor < (item.beats ? item.beats.length : item.data.length)) return;
    this.cursor = 0;
    this.head++;
    this.sent++;
    item.taken?.();
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  private load(item: QueueItem): void {
    const { tdata, tkeep, tlast, tuser, tid, octets } = this.bus;
    const words = this.words;
    const bytes = this.bytes;
    const base = tdata.byteOffset;
    if (item.beats) {
      const beat = item.beats[this.cursor]!;
      bytes.set(beat.data, base);
      if (tkeep) words.set(beat.keep, tkeep.offset);
      if (tlast) words[tlast.offset] = beat.last ? 1 : 0;
      if (tuser) words.set(beat.user, tuser.offset);
      if (tid) words.set(beat.id, tid.offset);
      this.step = 1;
      return;
    }
    const data = item.data;
    const pos = this.cursor;
    const n = Math.min(octets, data.length - pos);
    for (let i = 0; i < octets; i++) bytes[base + i] = i < n ? data[pos + i]! : 0;
    if (tkeep) {
      for (let j = 0; j < tkeep.words; j++) {
        const bits = n - j * WORD_BITS;
        words[tkeep.offset + j] = bits >= WORD_BITS ? ALL_ONES : bits <= 0 ? 0 : ((1 << bits) >>> 0) - 1;
      }
    }
    if (tlast) words[tlast.offset] = pos + n === data.length ? 1 : 0;
    if (tuser) words.set(item.user, tuser.offset);
    if (tid) words.set(item.id, tid.offset);
    this.step = n;
  }
}
