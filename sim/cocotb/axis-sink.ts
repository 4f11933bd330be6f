/**
 * Receives an AXI4-Stream interface out of the DUT (its `m_axis_*` outputs): drives tready from
 * a pause generator and collects frames, keeping the octets whose tkeep bit is set and the tuser
 * and tid of the last beat (where verilog-axis style blocks put a frame's error flag and stream). Without a tlast
 * port every beat is a frame. Beats are read from the pre-edge snapshot: the values that were on
 * the bus when the handshake happened. With `interleaved`, frames of different tid may interleave
 * beat by beat (AXI4-Stream allows it): each tid's frame is assembled on its own.
 */
import type { SimModel } from '../verilator/model';
import { axisBus, readIdPre, readUserPre, type AxisBus, type AxisFrame } from './axis-bus';
import type { Component } from './component';
import { assemblyWithRoom, type Assembly } from './frame-assembly';
import { never, type PauseGen } from './pause';

export interface AxisSinkOptions {
  readonly pause?: PauseGen;
  /** Assemble each tid's frame on its own (the bus has tid; its frames interleave). */
  readonly interleaved?: boolean;
}

const WORD_SHIFT = 5;
const BIT_INDEX_MASK = 31;
const COMPACT_AFTER = 1024;

export class AxisSink implements Component {
  readonly bus: AxisBus;
  private pause: PauseGen;
  private ready = 0;
  /** The frame being assembled, per tid with `interleaved` (else one, at key 0). */
  private readonly assemblies = new Map<number, Assembly>();
  private readonly interleaved: boolean;
  private readonly frames: AxisFrame[] = [];
  private head = 0;
  private beats = 0;
  private received = 0;
  private readonly model: SimModel;
  private readonly words: Uint32Array;
  private readonly bytes: Uint8Array;

  constructor(model: SimModel, prefix = 'm_axis', opts: AxisSinkOptions = {}) {
    this.bus = axisBus(model, prefix);
    if (this.bus.tready.direction !== 'input') throw new Error(`AxisSink drives ${this.bus.tready.name}, but it is a DUT output: is ${prefix} the right prefix?`);
    this.pause = opts.pause ?? never();
    if (opts.interleaved && !this.bus.tid) throw new Error(`AxisSink: ${prefix} has no tid, so its frames cannot interleave`);
    this.interleaved = opts.interleaved ?? false;
    this.model = model;
    this.words = model.words;
    this.bytes = model.bytes;
  }

  setPause(pause: PauseGen): void {
    this.pause = pause;
  }

  /** Frames received and not yet taken with `recv`/`drain`. */
  get available(): number {
    return this.frames.length - this.head;
  }

  /** Frames received since construction. */
  get receivedCount(): number {
    return this.received;
  }

  /** Beats accepted since construction. */
  get beatCount(): number {
    return this.beats;
  }

  /** The oldest received frame not yet taken, or undefined. */
  recv(): AxisFrame | undefined {
    if (this.head === this.frames.length) return undefined;
    const f = this.frames[this.head++];
    if (this.head >= COMPACT_AFTER && this.head * 2 >= this.frames.length) {
      this.frames.splice(0, this.head);
      this.head = 0;
    }
    return f;
  }

  drain(): AxisFrame[] {
    const out = this.frames.slice(this.head);
    this.frames.length = 0;
    this.head = 0;
    return out;
  }

  drive(): void {
    this.ready = this.pause.next() ? 0 : 1;
    this.words[this.bus.tready.offset] = this.ready;
  }

  sample(): void {
    const words = this.words;
    const { tdata, tvalid, tkeep, tlast, octets } = this.bus;
    if (this.ready === 0 || words[tvalid.preOffset] === 0) return;
    this.beats++;
    const key = this.interleaved ? readIdPre(this.model, this.bus.tid) : 0;
    const a = assemblyWithRoom(this.assemblies, key, octets);
    const src = this.bytes;
    const dst = a.buf;
    const base = tdata.preByteOffset;
    let n = a.n;
    if (tkeep) {
      for (let i = 0; i < octets; i++) {
        if ((words[tkeep.preOffset + (i >>> WORD_SHIFT)]! >>> (i & BIT_INDEX_MASK)) & 1) dst[n++] = src[base + i]!;
      }
    } else {
      for (let i = 0; i < octets; i++) dst[n++] = src[base + i]!;
    }
    a.n = n;
    if (tlast && words[tlast.preOffset] === 0) return;
    this.frames.push({ data: dst.slice(0, n), tuser: readUserPre(this.model, this.bus.tuser), tid: readIdPre(this.model, this.bus.tid), cycle: this.model.cycles });
    a.n = 0;
    this.received++;
  }
}
