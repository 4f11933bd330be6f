/**
 * AxisSink's counterpart in the addon (sim/verilator/channel.ts): tready from the pause and the
 * beats taken logged in C++ inside `SimModel.run`; frames are assembled from the log when
 * TypeScript asks (`recv`, `drain`, `available`), with the same contents and cycles AxisSink gives.
 *
 * With `beats: true` it also keeps every beat as an AxisMonitor on the same interface would record
 * it (`beats`, the same cycles): a TypeScript monitor is a per-cycle component, which would take the
 * bench off native batches.
 */
import type { SimModel } from '../verilator/model';
import { LOG_CYCLE_WORDS, NativeSinkChannel, STATUS_FRAMES, type Reaches } from '../verilator/channel';
import { decodeBigInt } from '../verilator/port-values';
import { axisBus, type AxisBus, type AxisFrame, type AxisUser } from './axis-bus';
import type { MonitoredBeat } from './axis-monitor';
import type { AxisSinkOptions } from './axis-sink';
import { assemblyWithRoom, type Assembly } from './frame-assembly';
import { never, type PauseGen } from './pause';

const WORD_SHIFT = 5;
const BIT_INDEX_MASK = 31;
const WORD_BITS = 32;
const OCTETS_PER_WORD = 4;

export interface NativeAxisSinkOptions extends AxisSinkOptions {
  /** Keep every beat taken in `beats` (it allocates per beat, as AxisMonitor does). */
  readonly beats?: boolean;
}

export class NativeAxisSink {
  readonly bus: AxisBus;
  private readonly channel: NativeSinkChannel;
  private readonly interleaved: boolean;
  private readonly assemblies = new Map<number, Assembly>();
  private frames: AxisFrame[] = [];
  private taken = 0;
  /** Every beat taken, as AxisMonitor records it (with `beats: true`; brought up to date by `recv`/`drain`). */
  readonly beats: MonitoredBeat[] = [];
  private readonly keepBeats: boolean;
  /** Word index of each payload port within an item (-1: the bus has none). */
  private readonly at: { readonly keep: number; readonly last: number; readonly user: number; readonly id: number };

  constructor(model: SimModel, prefix = 'm_axis', opts: NativeAxisSinkOptions = {}) {
    const bus = (this.bus = axisBus(model, prefix));
    if (opts.interleaved && !bus.tid) throw new Error(`AxisSink: ${prefix} has no tid, so its frames cannot interleave`);
    this.interleaved = opts.interleaved ?? false;
    this.keepBeats = opts.beats ?? false;
    const payload = [bus.tdata, bus.tkeep, bus.tlast, bus.tuser, bus.tid];
    let n = 0;
    const place = payload.map((p) => (p ? (n += p.words) - p.words : -1));
    this.at = { keep: place[1]!, last: place[2]!, user: place[3]!, id: place[4]! };
    const ports = { valid: bus.tvalid, ready: bus.tready, payload: payload.filter((p) => p !== undefined), ...(bus.tlast && { last: bus.tlast }) };
    this.channel = new NativeSinkChannel(model, ports, opts.pause ?? never());
  }

  setPause(pause: PauseGen): void {
    this.channel.setPause(pause);
  }

  /** Frames received and not yet taken with `recv`/`drain`. */
  get available(): number {
    return this.channel.frames - this.taken;
  }

  get receivedCount(): number {
    return this.channel.frames;
  }

  get beatCount(): number {
    return this.channel.items;
  }

  /** `() => receivedCount ≥ n`, which Testbench.until can run natively. */
  received(n: number): Reaches {
    return this.channel.reaches(STATUS_FRAMES, n);
  }

  recv(): AxisFrame | undefined {
    this.assemble();
    const f = this.frames.shift();
    if (f) this.taken++;
    return f;
  }

  drain(): AxisFrame[] {
    this.assemble();
    const out = this.frames;
    this.frames = [];
    this.taken += out.length;
    return out;
  }

  /** Turns the beats logged since the last call into frames, as AxisSink.sample does beat by beat. */
  private assemble(): void {
    const log = this.channel.drain();
    const { tkeep, tlast, tuser, tid, octets } = this.bus;
    const stride = LOG_CYCLE_WORDS + this.channel.itemWords;
    const bytes = new Uint8Array(log.buffer);
    for (let e = 0; e < log.length; e += stride) {
      const p = e + LOG_CYCLE_WORDS;
      const id = tid ? log[p + this.at.id]! : 0;
      const key = this.interleaved ? id : 0;
      const a = assemblyWithRoom(this.assemblies, key, octets);
      const base = p * OCTETS_PER_WORD;
      let n = a.n;
      for (let i = 0; i < octets; i++) {
        if (!tkeep || (log[p + this.at.keep + (i >>> WORD_SHIFT)]! >>> (i & BIT_INDEX_MASK)) & 1) a.buf[n++] = bytes[base + i]!;
      }
      a.n = n;
      const user: AxisUser = !tuser ? 0 : tuser.width <= WORD_BITS ? log[p + this.at.user]! : decodeBigInt(log, p + this.at.user, tuser.words);
      if (this.keepBeats) {
        this.beats.push({
          // AxisMonitor counts edges from 0; the log holds the model's count after the edge.
          cycle: NativeSinkChannel.cycleAt(log, e) - 1,
          data: bytes.slice(base, base + octets),
          tkeep: tkeep ? decodeBigInt(log, p + this.at.keep, tkeep.words) : (1n << BigInt(octets)) - 1n,
          tlast: tlast ? log[p + this.at.last]! !== 0 : true,
          tuser: user,
          tid: id,
        });
      }
      if (tlast && log[p + this.at.last]! === 0) continue;
      this.frames.push({ data: a.buf.slice(0, n), tuser: user, tid: id, cycle: NativeSinkChannel.cycleAt(log, e) });
      a.n = 0;
    }
  }
}
