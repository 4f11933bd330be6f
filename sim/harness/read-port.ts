import type { Prng } from '../../ts-model/util/prng';
import type { Component } from '../cocotb/component';
import { never, type PauseGen } from '../cocotb/pause';
import type { PortHandle, SimModel } from '../verilator/model';

/**
 * The host-memory read port every block with memory has (ddp_tx, rdmap_tx_resp, atomic_unit, and
 * the receive path's and the top's `mem_rd_*`): rd_valid / rd_ready / rd_addr, then rd_data_valid
 * / rd_data, after `prefix`. rd_ready comes from a pause generator; reads are answered in order,
 * the data on the L-th rising edge after the read's handshake (L drawn from the testbench's stream
 * at the handshake, uniform in [min, max]; L = 1: a registered memory), read from memory at the
 * handshake; rd_data holds garbage while not valid. Checks: every address a multiple of the width,
 * rd_valid and rd_addr held until the handshake.
 */
export interface ReadPortOptions {
  /** Octets per beat: what each read returns. */
  readonly width: number;
  readonly read: (addr: bigint, n: number) => Uint8Array;
  /** Port name prefix (`mem_` on the receive path and the top; none on the blocks). */
  readonly prefix?: string;
  readonly pause?: PauseGen;
  readonly latency: { readonly min: number; readonly max: number };
  /**
   * rd_valid and rd_addr come from registers (atomic_unit): their value before an edge is the one
   * at it, so the handshake is known when inputs are driven and L = 0 answers in the handshake's
   * own cycle. Checked: rd_valid does not change with rd_ready.
   */
  readonly registered?: boolean;
  readonly report: (violation: string) => void;
}

export class ReadPortResponder implements Component {
  reads = 0;
  private readonly pending: { data: Uint8Array; due: number }[] = [];
  private held: bigint | null = null;
  private predicted = false;
  /** Cycles sampled so far: while driving a cycle, the cycles before it. */
  private cycle = 0;
  private readonly pause: PauseGen;
  private readonly p: Record<'valid' | 'ready' | 'addr' | 'dataValid' | 'data', PortHandle>;

  constructor(
    private readonly model: SimModel,
    private readonly r: Prng,
    private readonly o: ReadPortOptions,
  ) {
    const h = (n: string) => model.handle(`${o.prefix ?? ''}${n}`);
    this.p = { valid: h('rd_valid'), ready: h('rd_ready'), addr: h('rd_addr'), dataValid: h('rd_data_valid'), data: h('rd_data') };
    this.pause = o.pause ?? never();
  }

  /** Reads handshaken and not answered yet. */
  get inFlight(): number {
    return this.pending.length;
  }

  /** Forgets the reads in flight (the DUT was reset). */
  drop(): void {
    this.pending.length = 0;
    this.held = null;
  }

  drive(): void {
    const { model, p } = this;
    const ready = !this.pause.next();
    model.pokeNumber(p.ready, ready ? 1 : 0);
    if (this.o.registered) {
      this.predicted = ready && model.peekNumber(p.valid) === 1;
      if (this.predicted) this.accept(model.peek(p.addr));
    }
    const head = this.pending[0];
    if (head && head.due <= this.cycle) {
      this.pending.shift();
      model.pokeNumber(p.dataValid, 1);
      model.poke(p.data, head.data);
    } else {
      model.pokeNumber(p.dataValid, 0);
      // Garbage while not valid, written word by word: the draws (and so the values) of
      // r.bytes(width), without an array and a checked poke every idle cycle.
      const { words } = model;
      const { offset, words: n, topMask } = p.data;
      for (let i = 0; i < n; i++) words[offset + i] = this.r.u32();
      words[offset + n - 1]! &= topMask;
    }
  }

  sample(): void {
    const { model, p } = this;
    const rv = model.peekPreNumber(p.valid) === 1;
    if (this.held !== null && (!rv || model.peekPre(p.addr) !== this.held)) this.o.report(`rd_valid or rd_addr changed before the handshake at cycle ${this.cycle}`);
    this.held = null;
    const fire = rv && model.peekPreNumber(p.ready) === 1;
    if (this.o.registered && fire !== this.predicted) this.o.report(`rd_valid changed combinationally at cycle ${this.cycle}`);
    if (rv) {
      const addr = model.peekPre(p.addr);
      if (!fire) this.held = addr;
      else {
        if (addr % BigInt(this.o.width) !== 0n) this.o.report(`read of unaligned 0x${addr.toString(16)} at cycle ${this.cycle}`);
        if (!this.o.registered) this.accept(addr);
        this.reads++;
      }
    }
    this.cycle++;
  }

  /** Queues the answer to a read of `addr` handshaken in this cycle. */
  private accept(addr: bigint): void {
    const last = this.pending.length ? this.pending[this.pending.length - 1]!.due : 0;
    this.pending.push({ data: this.o.read(addr, this.o.width), due: Math.max(last, this.cycle + this.r.int(this.o.latency.min, this.o.latency.max)) });
  }
}
