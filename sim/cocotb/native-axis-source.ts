/**
 * AxisSource's counterpart in the addon (sim/verilator/channel.ts): the same public API and the
 * same cycles (a seed's pause replays bit for bit), but the per-cycle work runs in C++ inside
 * `SimModel.run`, so it is no Testbench component. Frames are split into beats when queued: each
 * beat is an item of the channel (tdata, tkeep, tlast, tuser, tid words, those the bus has), the
 * last beat of a `send` or `sendBeats` call ending the frame `sentCount` counts.
 *
 * What AxisSource does per cycle from TypeScript cannot be done here: no `taken` callback (it
 * would run after the batch, not in its cycle; `frameCycle` gives the cycle of the last one).
 */
import type { SimModel } from '../verilator/model';
import { NativeSourceChannel, STATUS_FRAMES, type Reaches } from '../verilator/channel';
import { encodePortValue } from '../verilator/port-values';
import { axisBus, type AxisBus, type AxisUser } from './axis-bus';
import type { AxisSendBeat, AxisSideband, AxisSourceOptions } from './axis-source';
import { never, type PauseGen } from './pause';

const WORD_BITS = 32;
const ALL_ONES = 0xffffffff;
const OCTETS_PER_WORD = 4;

export class NativeAxisSource {
  readonly bus: AxisBus;
  private readonly channel: NativeSourceChannel;
  /** Word index of each payload port within an item (-1: the bus has none). */
  private readonly at: { readonly keep: number; readonly last: number; readonly user: number; readonly id: number };
  private frames = 0;

  constructor(model: SimModel, prefix = 's_axis', opts: AxisSourceOptions = {}) {
    const bus = (this.bus = axisBus(model, prefix));
    const payload = [bus.tdata, bus.tkeep, bus.tlast, bus.tuser, bus.tid];
    let n = 0;
    const place = payload.map((p) => (p ? (n += p.words) - p.words : -1));
    this.at = { keep: place[1]!, last: place[2]!, user: place[3]!, id: place[4]! };
    this.channel = new NativeSourceChannel(model, { valid: bus.tvalid, ready: bus.tready, payload: payload.filter((p) => p !== undefined) }, opts.pause ?? never());
  }

  setPause(pause: PauseGen): void {
    this.channel.setPause(pause);
  }

  /** As AxisSource.send: full beats, contiguous tkeep, the frame's tuser and TID on every beat. */
  send(data: Uint8Array, sideband: AxisUser | AxisSideband = 0, taken?: () => void): void {
    const { prefix, octets } = this.bus;
    if (taken) throw new Error(`${prefix}: a native source cannot call back in the cycle a frame is taken; use AxisSource`);
    if (data.length === 0) throw new RangeError(`${prefix}: an empty frame has no beats; use sendBeats for a null beat`);
    const { tuser: user = 0, tid: id = 0 } = typeof sideband === 'object' ? sideband : { tuser: sideband };
    this.check(0, user, id);
    const ch = this.channel;
    const { keep, last } = this.at;
    const keepWords = this.bus.tkeep?.words ?? 0;
    for (let pos = 0; pos < data.length; pos += octets) {
      const n = Math.min(octets, data.length - pos);
      const end = pos + n === data.length;
      const base = ch.item(end);
      ch.stageOctets.set(data.subarray(pos, pos + n), base * OCTETS_PER_WORD);
      const words = ch.stage;
      for (let j = 0; j < keepWords; j++) {
        const bits = n - j * WORD_BITS;
        words[base + keep + j] = bits >= WORD_BITS ? ALL_ONES : bits <= 0 ? 0 : ((1 << bits) >>> 0) - 1;
      }
      if (last >= 0) words[base + last] = end ? 1 : 0;
      this.sideband(base, user, id);
    }
    this.frames++;
  }

  /** As AxisSource.sendBeats: beats exactly as given, one frame for `sentCount`. */
  sendBeats(beats: readonly AxisSendBeat[]): void {
    if (beats.length === 0) return;
    const { octets, tkeep, tlast, prefix } = this.bus;
    // Every beat is checked before any is queued, so a bad one leaves the queue as it was.
    for (const [i, b] of beats.entries()) {
      if (b.data.length > octets) throw new RangeError(`${prefix}: beat ${i} has ${b.data.length} octets, the interface carries ${octets}`);
      if (!tlast && b.tlast !== undefined) throw new Error(`${prefix}: the interface has no tlast port`);
      this.check(b.tkeep ?? 0, b.tuser ?? 0, b.tid ?? 0);
    }
    const ch = this.channel;
    beats.forEach((b, i) => {
      const base = ch.item(i === beats.length - 1);
      ch.stageOctets.set(b.data, base * OCTETS_PER_WORD);
      const keep = b.tkeep ?? (b.data.length === octets ? (1n << BigInt(octets)) - 1n : (1n << BigInt(b.data.length)) - 1n);
      const words = ch.stage;
      if (tkeep) encodePortValue(words, ch.stageOctets, base + this.at.keep, tkeep, keep);
      if (tlast) words[base + this.at.last] = (b.tlast ?? i === beats.length - 1) ? 1 : 0;
      this.sideband(base, b.tuser ?? 0, b.tid ?? 0);
    });
    this.frames++;
  }

  /** Throws as AxisSource does for a value its port cannot carry (or a port the bus lacks). */
  private check(keep: number | bigint, user: AxisUser, id: number): void {
    const { tkeep, tuser, tid, prefix } = this.bus;
    const scratch = new Uint32Array(Math.max(tkeep?.words ?? 0, tuser?.words ?? 0, tid?.words ?? 0, 1));
    const octets = new Uint8Array(scratch.buffer);
    if (tkeep) encodePortValue(scratch, octets, 0, tkeep, keep);
    if (tuser) encodePortValue(scratch, octets, 0, tuser, user);
    else if (user !== 0 && user !== 0n) throw new Error(`${prefix} tuser: the interface has no such port to carry ${user}`);
    if (tid) encodePortValue(scratch, octets, 0, tid, id);
    else if (id !== 0) throw new Error(`${prefix} tid: the interface has no such port to carry ${id}`);
  }

  private sideband(base: number, user: AxisUser, id: number): void {
    const { tuser, tid } = this.bus;
    const words = this.channel.stage;
    if (tuser) encodePortValue(words, this.channel.stageOctets, base + this.at.user, tuser, user);
    if (tid) encodePortValue(words, this.channel.stageOctets, base + this.at.id, tid, id);
  }

  /** Frames (or beat lists) queued and not yet fully accepted. */
  get pending(): number {
    return this.frames - this.channel.frames;
  }

  /** Frames (or beat lists) fully accepted by the DUT. */
  get sentCount(): number {
    return this.channel.frames;
  }

  /** Beats accepted by the DUT. */
  get beatCount(): number {
    return this.channel.items;
  }

  /** Nothing queued and nothing offered. */
  get idle(): boolean {
    return this.pending === 0;
  }

  /** The model's cycle count when the last frame's last beat was accepted. */
  get frameCycle(): number {
    return this.channel.lastFrameCycle;
  }

  /** `() => sentCount ≥ n`, which Testbench.until can run natively. */
  sent(n: number): Reaches {
    return this.channel.reaches(STATUS_FRAMES, n);
  }
}
