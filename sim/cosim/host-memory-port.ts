import { HostMemory } from '../../ts-model/memory/host-memory';
import type { Prng } from '../../ts-model/util/prng';
import type { Component } from '../cocotb/component';
import type { PortHandle, SimModel } from '../verilator/model';
import { ReadPortResponder } from './tx-ports';

/** One accepted write beat: its W-aligned address and the span of enabled octets. */
export interface WriteBeat {
  readonly addr: bigint;
  readonly strb: bigint;
  readonly cycle: number;
}

export interface HostMemoryPortOptions {
  /** Octets per beat (the datapath width). */
  readonly width: number;
  /** Port name prefix: `${prefix}wr_valid`, `${prefix}rd_valid`, … (default 'mem_'). */
  readonly prefix?: string;
  /** Per-cycle probability of holding wr_ready / rd_ready low (back-pressure). */
  readonly wrPause?: number;
  readonly rdPause?: number;
  /** Read data returns 1..maxLatency cycles after the read handshake, in order. */
  readonly maxLatency?: number;
}

/**
 * Host memory behind the RTL's W-octet memory ports, as a testbench component: writes land at
 * their handshake (per-octet strobes) in a byte-exact sparse memory; reads are the transmit
 * blocks' ReadPortResponder (sim/cosim/tx-ports.ts) on `mem_rd_*`, in order after a random latency
 * (rd_data_valid is always accepted by the DUT). Back-pressure on both ports is random and seeded.
 * Every accepted write beat is logged for the protection check, and protocol faults (misaligned
 * address, empty strobe, payload changing under a pending valid) are reported.
 */
export class HostMemoryPort implements Component {
  memory = new HostMemory();
  readonly writes: WriteBeat[] = [];
  readonly faults: string[] = [];
  private readonly W: number;
  private readonly p: Record<'wrValid' | 'wrReady' | 'wrAddr' | 'wrData' | 'wrStrb', PortHandle>;
  private readonly reader: ReadPortResponder;
  private cycle = 0;
  private held: string | null = null;
  private wrPause: number;
  private rdPause: number;

  constructor(
    private readonly model: SimModel,
    private readonly rng: Prng,
    opts: HostMemoryPortOptions,
  ) {
    this.W = opts.width;
    const pre = opts.prefix ?? 'mem_';
    const h = (n: string) => model.handle(`${pre}${n}`);
    this.p = { wrValid: h('wr_valid'), wrReady: h('wr_ready'), wrAddr: h('wr_addr'), wrData: h('wr_data'), wrStrb: h('wr_strb') };
    this.wrPause = opts.wrPause ?? 0;
    this.rdPause = opts.rdPause ?? 0;
    this.reader = new ReadPortResponder({ model, width: this.W, cycle: () => this.cycle, report: (v) => this.fault(v) }, rng, {
      prefix: pre,
      read: (addr, n) => this.memory.read(addr, n),
      pause: { next: () => this.rdPause > 0 && rng.bool(this.rdPause) },
      minLatency: 1,
      maxLatency: Math.max(1, opts.maxLatency ?? 1),
    });
  }

  /** Changes the back-pressure (e.g. 0 for a full-rate measurement). */
  setPause(wr: number, rd: number): void {
    this.wrPause = wr;
    this.rdPause = rd;
  }

  /** A fresh, empty memory and write log (a new stream); reads in flight are dropped. */
  clear(): void {
    this.memory = new HostMemory();
    this.writes.length = 0;
    this.reader.drop();
  }

  /** No read in flight. */
  get idle(): boolean {
    return this.reader.inFlight === 0;
  }

  drive(): void {
    this.model.pokeNumber(this.p.wrReady, this.wrPause > 0 && this.rng.bool(this.wrPause) ? 0 : 1);
    this.reader.drive();
  }

  sample(): void {
    const m = this.model;
    this.cycle++;
    this.reader.sample();
    const mask = BigInt(this.W - 1);
    const wv = m.peekPreNumber(this.p.wrValid) === 1;
    const payload = wv ? `${m.peekPre(this.p.wrAddr)}/${m.peekPre(this.p.wrStrb)}/${m.peekPre(this.p.wrData)}` : null;
    if (this.held !== null && payload !== this.held) this.fault(`mem_wr payload changed or valid dropped while waiting for ready`);
    if (wv && m.peekPreNumber(this.p.wrReady) === 1) {
      const addr = m.peekPre(this.p.wrAddr);
      const strb = m.peekPre(this.p.wrStrb);
      const data = m.peekPreBytes(this.p.wrData);
      if ((addr & mask) !== 0n) this.fault(`write to unaligned 0x${addr.toString(16)}`);
      if (strb === 0n) this.fault(`write beat with no strobe at 0x${addr.toString(16)}`);
      this.writes.push({ addr, strb, cycle: m.cycles });
      // Contiguous runs of enabled octets, written in one call each.
      let j = 0;
      while (j < this.W) {
        if (((strb >> BigInt(j)) & 1n) === 0n) {
          j++;
          continue;
        }
        let k = j;
        while (k < this.W && ((strb >> BigInt(k)) & 1n) === 1n) k++;
        this.memory.write(addr + BigInt(j), data.subarray(j, k));
        j = k;
      }
      this.held = null;
    } else {
      this.held = payload;
    }
  }

  private fault(s: string): void {
    if (this.faults.length < 20) this.faults.push(`${s} (cycle ${this.model.cycles})`);
  }
}
