/**
 * Watches an AXI4-Stream interface without driving it and records every beat that crossed it
 * (tvalid and tready both high at a rising edge), with the edge's cycle number. For debugging and
 * scoreboards; it allocates per beat, so keep it off throughput runs.
 */
import type { SimModel } from '../verilator/model';
import { axisBus, readIdPre, readUserPre, type AxisBeat, type AxisBus, type AxisFrame } from './axis-bus';
import type { Component } from './component';

export interface MonitoredBeat extends AxisBeat {
  /** The rising edge at which the beat was transferred, counting from 0. */
  readonly cycle: number;
}

export class AxisMonitor implements Component {
  readonly bus: AxisBus;
  readonly beats: MonitoredBeat[] = [];
  private readonly model: SimModel;
  private readonly allKeep: bigint;

  constructor(model: SimModel, prefix: string) {
    this.bus = axisBus(model, prefix);
    this.model = model;
    this.allKeep = (1n << BigInt(this.bus.octets)) - 1n;
  }

  sample(): void {
    const m = this.model;
    const { tdata, tvalid, tready, tkeep, tlast, tuser, tid } = this.bus;
    if (m.peekPreNumber(tvalid) === 0 || m.peekPreNumber(tready) === 0) return;
    this.beats.push({
      cycle: m.cycles - 1,
      data: m.peekPreBytes(tdata),
      tkeep: tkeep ? m.peekPre(tkeep) : this.allKeep,
      tlast: tlast ? m.peekPreNumber(tlast) !== 0 : true,
      tuser: readUserPre(m, tuser),
      tid: readIdPre(m, tid),
    });
  }

  /**
   * The recorded beats grouped into frames (octets by tkeep, tuser and tid of the last beat), each
   * with the model's cycle count after its last beat's edge, as AxisSink records it.
   */
  frames(): AxisFrame[] {
    const out: AxisFrame[] = [];
    let octets: number[] = [];
    for (const b of this.beats) {
      b.data.forEach((v, i) => {
        if ((b.tkeep >> BigInt(i)) & 1n) octets.push(v);
      });
      if (b.tlast) {
        out.push({ data: Uint8Array.from(octets), tuser: b.tuser, tid: b.tid, cycle: b.cycle + 1 });
        octets = [];
      }
    }
    return out;
  }
}
