import { hex } from '../../ts-model/util/hex';
import type { Prng } from '../../ts-model/util/prng';
import type { PauseGen } from '../cocotb/pause';
import type { Component } from '../cocotb/component';
import type { PortHandle, SimModel } from '../verilator/model';

/**
 * Testbench components for the two ports every transmit block (rdmap_tx_resp_w<W>, ddp_tx_w<W>)
 * has: the W-octet memory read port and the ULPDU stream on m_axis, with their protocol checks.
 * The read port also answers the receive path's `mem_rd_*` (HostMemoryPort).
 * `cycle()` is the testbench's cycle count; `report` collects violations.
 */

export interface PortCheckContext {
  readonly model: SimModel;
  readonly width: number;
  readonly cycle: () => number;
  readonly report: (violation: string) => void;
}

const hasBit = (words: Uint32Array, offset: number, k: number): boolean => ((words[offset + (k >>> 5)]! >>> (k & 31)) & 1) === 1;

/**
 * The memory read port (rd_valid / rd_ready / rd_addr, rd_data_valid / rd_data, after `prefix`):
 * rd_ready from `pause`; reads answered in order, minLatency..maxLatency cycles after their
 * handshake, with `read(addr, W)` at the handshake; garbage on rd_data while not valid. Checks:
 * every address a multiple of W, rd_valid and rd_addr held until the handshake.
 */
export class ReadPortResponder implements Component {
  reads = 0;
  private readonly pending: { data: Uint8Array; due: number }[] = [];
  private held: bigint | null = null;
  private readonly p: Record<'valid' | 'ready' | 'addr' | 'dataValid' | 'data', PortHandle>;

  constructor(
    private readonly c: PortCheckContext,
    private readonly r: Prng,
    private readonly o: { readonly read: (addr: bigint, n: number) => Uint8Array; readonly pause: PauseGen; readonly minLatency: number; readonly maxLatency: number; readonly prefix?: string },
  ) {
    const h = (n: string) => c.model.handle(`${o.prefix ?? ''}${n}`);
    this.p = { valid: h('rd_valid'), ready: h('rd_ready'), addr: h('rd_addr'), dataValid: h('rd_data_valid'), data: h('rd_data') };
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
    const { model } = this.c;
    model.pokeNumber(this.p.ready, this.o.pause.next() ? 0 : 1);
    const head = this.pending[0];
    if (head && head.due <= this.c.cycle()) {
      this.pending.shift();
      model.pokeNumber(this.p.dataValid, 1);
      model.poke(this.p.data, head.data);
    } else {
      model.pokeNumber(this.p.dataValid, 0);
      // Garbage while not valid, written word by word: the draws (and so the values) of
      // r.bytes(width), without an array and a checked poke every idle cycle.
      const { words } = model;
      const { offset, words: n, topMask } = this.p.data;
      for (let i = 0; i < n; i++) words[offset + i] = this.r.u32();
      words[offset + n - 1]! &= topMask;
    }
  }

  sample(): void {
    const { model, report, width } = this.c;
    const cycle = this.c.cycle();
    const rv = model.peekPreNumber(this.p.valid) === 1;
    if (this.held !== null && (!rv || model.peekPre(this.p.addr) !== this.held)) report(`rd_valid or rd_addr changed before the handshake at cycle ${cycle}`);
    this.held = null;
    if (!rv) return;
    const addr = model.peekPre(this.p.addr);
    if (model.peekPreNumber(this.p.ready) !== 1) {
      this.held = addr;
      return;
    }
    if (addr % BigInt(width) !== 0n) report(`read of unaligned 0x${addr.toString(16)} at cycle ${cycle}`);
    const last = this.pending.length ? this.pending[this.pending.length - 1]!.due : 0;
    this.pending.push({ data: this.o.read(addr, width), due: Math.max(last, cycle + this.r.int(this.o.minLatency, this.o.maxLatency)) });
    this.reads++;
  }
}

/**
 * Checks the ULPDU stream on m_axis (the packets themselves are collected by the testbench's
 * sink): a beat held until taken, tkeep full on every beat but the last and 2^k − 1 (k ≥ 1)
 * there. Records the cycle of each packet's last beat.
 */
export class UlpduStreamCheck implements Component {
  readonly lastBeatAt: number[] = [];
  private held: string | null = null;
  private readonly p: Record<'valid' | 'ready' | 'keep' | 'last' | 'data', PortHandle>;

  constructor(private readonly c: PortCheckContext) {
    const h = (n: string) => c.model.handle(`m_axis_${n}`);
    this.p = { valid: h('tvalid'), ready: h('tready'), keep: h('tkeep'), last: h('tlast'), data: h('tdata') };
  }

  sample(): void {
    const { model, report, width: W } = this.c;
    const cycle = this.c.cycle();
    const valid = model.peekPreNumber(this.p.valid) === 1;
    const taken = valid && model.peekPreNumber(this.p.ready) === 1;
    const beat = valid ? `${hex(model.peekPreBytes(this.p.data))}/${model.peekPre(this.p.keep).toString(16)}/${model.peekPreNumber(this.p.last)}` : '';
    if (this.held !== null && beat !== this.held) report(`m_axis beat changed or dropped before it was taken at cycle ${cycle}`);
    this.held = valid && !taken ? beat : null;
    if (!taken) return;
    const last = model.peekPreNumber(this.p.last) === 1;
    const keep = this.p.keep.preOffset;
    const words = model.words;
    let k = 0;
    while (k < W && hasBit(words, keep, k)) k++;
    let rest = false;
    for (let j = k; j < W; j++) rest ||= hasBit(words, keep, j);
    if (rest || k === 0 || (!last && k !== W)) report(`m_axis tkeep 0x${model.peekPre(this.p.keep).toString(16)} (tlast ${last}) at cycle ${cycle}`);
    if (last) this.lastBeatAt.push(cycle);
  }
}

export interface UlpduMismatch {
  readonly what: string;
  readonly index: number;
  readonly expected: string;
  readonly actual: string;
}

const show = (u: Uint8Array | undefined): string => (u ? `${u.length} octets ${hex(u.subarray(0, 48))}${u.length > 48 ? '…' : ''}` : 'none');

/** One mismatch per position where the ULPDUs differ (or one side has none), in order. */
export function ulpduMismatches(expected: readonly Uint8Array[], actual: readonly Uint8Array[]): UlpduMismatch[] {
  const out: UlpduMismatch[] = [];
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const e = expected[i];
    const a = actual[i];
    if (!e || !a || Buffer.compare(e, a) !== 0) out.push({ what: 'ULPDU', index: i, expected: show(e), actual: show(a) });
  }
  return out;
}
