/**
 * Receives an AXI4-Stream interface out of the DUT (its `m_axis_*` outputs): drives tready from
 * a pause generator and collects frames, keeping the octets whose tkeep bit is set and the tuser
 * and tid of the last beat (where verilog-axis style blocks put a frame's error flag and stream). Without a tlast
 * port every beat is a frame. Beats are read from the pre-edge snapshot: the values that were on
 * the bus when the handshake happened.
 */
import type { SimModel } from '../verilator/model';
import { axisBus, readIdPre, readUserPre, type AxisBus, type AxisFrame } from './axis-bus';
import type { Component } from './component';
import { never, type PauseGen } from './pause';

export interface AxisSinkOptions {
  readonly pause?: PauseGen;
}

const WORD_SHIFT = 5;
const BIT_INDEX_MASK = 31;
/** Initial frame assembly buffer; it doubles when a frame outgrows it. */
const INITIAL_FRAME_OCTETS = 2048;
const COMPACT_AFTER = 1024;

export class AxisSink implements Component {
  readonly bus: AxisBus;
  private pause: PauseGen;
  private ready = 0;
  private assembly = new Uint8Array(INITIAL_FRAME_OCTETS);
  private assembled = 0;
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
    if (this.assembled + octets > this.assembly.length) {
      const bigger = new Uint8Array(this.assembly.length * 2);
      bigger.set(this.assembly.subarray(0, this.assembled));
      this.assembly = bigger;
    }
    const src = this.bytes;
    const dst = this.assembly;
    const base = tdata.preByteOffset;
    let n = this.assembled;
    if (tkeep) {
      for (let i = 0; i < octets; i++) {
        if ((words[tkeep.preOffset + (i >>> WORD_SHIFT)]! >>> (i & BIT_INDEX_MASK)) & 1) dst[n++] = src[base + i]!;
      }
    } else {
      for (let i = 0; i < octets; i++) dst[n++] = src[base + i]!;
    }
    this.assembled = n;
    if (tlast && words[tlast.preOffset] === 0) return;
    this.frames.push({ data: dst.slice(0, n), tuser: readUserPre(this.model, this.bus.tuser), tid: readIdPre(this.model, this.bus.tid), cycle: this.model.cycles });
    this.assembled = 0;
    this.received++;
  }
}
