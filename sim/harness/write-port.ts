import type { Component } from '../cocotb/component';
import { never, type PauseGen } from '../cocotb/pause';
import type { PortHandle, SimModel } from '../verilator/model';
import type { Memory } from './memory';

/** One accepted write beat: its W-aligned address and its strobe. */
export interface WriteBeat {
  readonly addr: bigint;
  readonly strb: bigint;
  /** The model's cycle count at the handshake. */
  readonly cycle: number;
}

/**
 * The host-memory write port (wr_valid / wr_ready / wr_addr / wr_data / wr_strb, after `prefix`):
 * wr_ready from a pause generator; a beat lands in memory at its handshake, the octets its strobe
 * enables, and is logged. Checks: every address a multiple of the width, a strobe on every beat,
 * and the beat held while wr_ready is low.
 */
export interface WritePortOptions {
  readonly width: number;
  readonly memory: () => Memory;
  readonly prefix?: string;
  readonly pause?: PauseGen;
  readonly report: (violation: string) => void;
  /** Called with every beat and its data (tkeep'd by the strobe), after memory took it. */
  readonly onWrite?: (beat: WriteBeat, data: Uint8Array) => void;
}

export class WritePort implements Component {
  readonly writes: WriteBeat[] = [];
  private held: string | null = null;
  private readonly pause: PauseGen;
  private readonly p: Record<'valid' | 'ready' | 'addr' | 'data' | 'strb', PortHandle>;

  constructor(
    private readonly model: SimModel,
    private readonly o: WritePortOptions,
  ) {
    const h = (n: string) => model.handle(`${o.prefix ?? ''}${n}`);
    this.p = { valid: h('wr_valid'), ready: h('wr_ready'), addr: h('wr_addr'), data: h('wr_data'), strb: h('wr_strb') };
    this.pause = o.pause ?? never();
  }

  drive(): void {
    this.model.pokeNumber(this.p.ready, this.pause.next() ? 0 : 1);
  }

  sample(): void {
    const { model: m, p, o } = this;
    const W = o.width;
    const wv = m.peekPreNumber(p.valid) === 1;
    const payload = wv ? `${m.peekPre(p.addr)}/${m.peekPre(p.strb)}/${m.peekPre(p.data)}` : null;
    if (this.held !== null && payload !== this.held) o.report(`${o.prefix ?? ''}wr payload changed or valid dropped while waiting for ready at cycle ${m.cycles}`);
    if (!wv || m.peekPreNumber(p.ready) !== 1) {
      this.held = payload;
      return;
    }
    this.held = null;
    const addr = m.peekPre(p.addr);
    const strb = m.peekPre(p.strb);
    const data = m.peekPreBytes(p.data);
    if ((addr & BigInt(W - 1)) !== 0n) o.report(`write to unaligned 0x${addr.toString(16)} at cycle ${m.cycles}`);
    if (strb === 0n) o.report(`write beat with no strobe at 0x${addr.toString(16)} at cycle ${m.cycles}`);
    const beat = { addr, strb, cycle: m.cycles };
    this.writes.push(beat);
    // Contiguous runs of enabled octets, written in one call each.
    const memory = o.memory();
    let j = 0;
    while (j < W) {
      if (((strb >> BigInt(j)) & 1n) === 0n) {
        j++;
        continue;
      }
      let k = j;
      while (k < W && ((strb >> BigInt(k)) & 1n) === 1n) k++;
      memory.write(addr + BigInt(j), data.subarray(j, k));
      j = k;
    }
    o.onWrite?.(beat, data);
  }
}
