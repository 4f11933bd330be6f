import { HostMemory } from '../../ts-model/memory/host-memory';
import { hex } from '../../ts-model/util/hex';
import { prng, type Prng } from '../../ts-model/util/prng';
import type { Component } from '../cocotb/component';
import { Chance, never, type PauseGen } from '../cocotb/pause';
import { AxiMemorySlave, type AxiMemoryStats } from '../harness/axi-memory';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import type { PortHandle, SimModel } from '../verilator/model';

/**
 * Co-simulation of rnic_axi_mem_w<W> (hdl-gen/blocks/rnic-axi-mem.ts) alone: its native side is
 * driven as rnic_top drives it, its AXI4 side answered by the AXI4 slave memory
 * (sim/harness/axi-memory.ts: random ready and valid pauses, random latency per burst, answers of
 * different IDs out of order and interleaved, the protocol checks).
 *
 * Workload: runs of consecutive write beats and of consecutive reads (1..48 beats, some starting
 * near the end of a 4 KiB page, so runs cross pages), over a few pages at a random 64-bit base, so
 * reads often follow writes to the same octets; strobes all ones or random; random gaps between
 * beats and between runs. As rnic_top never does otherwise, a beat is not written while a read of
 * it is outstanding (requested, data not back): the adapter orders reads after earlier writes, not
 * writes after earlier reads.
 *
 * The reference is the native port's contract (sim/harness/host-memory-port.ts): a write lands at
 * its handshake, a read returns the memory of its handshake (writes of the same cycle not seen),
 * in request order. Compared: every read's data in order; every W beat (address and strobe) against
 * the native write beats in order; host memory against the reference at the end. With
 * `errorRate`, the slave fails bursts instead, and err_count / err_valid / err_code must count
 * exactly those (data is then not compared).
 */

export interface AxiMemCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  /** Runs of reads and of writes, each (default 200). */
  readonly runs?: number;
  /** The DUT: rnic_axi_mem_w<W> with option tags (rnic-axi-mem.ts axiMemName), default the plain one. */
  readonly module?: string;
  /** Per-cycle pause probability on every AXI channel, and on the native offers (default 0.3). */
  readonly pause?: number;
  /** Slave latency per burst (default 1..24). */
  readonly latency?: { readonly min: number; readonly max: number };
  readonly reorder?: boolean;
  readonly errorRate?: number;
  /** Largest AxLEN + 1 the slave accepts (default the DUT's maxBurst parameter). */
  readonly maxBurst?: number;
}

export interface AxiMemMismatch {
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
  readonly cycle: number;
}

export interface AxiMemCosimResult {
  readonly dut: string;
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly writeBeats: number;
  readonly readBeats: number;
  readonly cycles: number;
  readonly mismatches: number;
  readonly firstMismatch: AxiMemMismatch | null;
  /** Protocol faults of the AXI4 side (the slave's checks) and of the native side. */
  readonly violations: string[];
  readonly stats: AxiMemoryStats;
  /** The slave's failed responses (B per burst, R per beat) and the DUT's err_* outputs. */
  readonly errors: { readonly injected: number; readonly counted: number; readonly valid: boolean; readonly code: number };
}

interface Beat {
  readonly addr: bigint;
  readonly data: Uint8Array;
  readonly strb: bigint;
}

/** Runs of consecutive beats over `pages` pages from `base`: the workload of one side. */
function runsOf(r: Prng, W: number, base: bigint, pages: number, runs: number): bigint[][] {
  const perPage = 4096 / W;
  return Array.from({ length: runs }, () => {
    const len = r.pick([1, 1, 2, 3, r.int(4, 20), r.int(4, 48), 16, 32]);
    // Half the runs start in a page's last beats: they cross into the next page.
    const beat = r.bool(0.5) ? r.int(0, pages * perPage - len) : r.int(0, pages - 1) * perPage + perPage - r.int(1, Math.min(len, perPage));
    const start = Math.max(0, Math.min(beat, pages * perPage - len));
    return Array.from({ length: len }, (_, i) => base + BigInt((start + i) * W));
  });
}

/**
 * rnic_top's side of the ports: a write driver and a read driver, each offering its runs' beats
 * (held until taken), and the read data checked in order against the reference.
 */
class NativeSide implements Component {
  readonly ref = new HostMemory();
  readonly writes: Beat[] = [];
  readonly violations: string[] = [];
  readonly mismatches: AxiMemMismatch[] = [];
  readsTaken = 0;
  readsBack = 0;
  private readonly wq: Beat[];
  private readonly rq: bigint[];
  private wOffer: Beat | null = null;
  private rOffer: bigint | null = null;
  /** Reads taken, their expected data, in order. */
  private readonly expected: { addr: bigint; data: Uint8Array; cycle: number }[] = [];
  /** Reads outstanding per beat address (hex). */
  private readonly outstanding = new Map<bigint, number>();
  private readonly p: Record<string, PortHandle>;
  private cycle = 0;

  constructor(
    private readonly model: SimModel,
    private readonly r: Prng,
    private readonly W: number,
    writes: bigint[][],
    reads: bigint[][],
    private readonly pauses: { readonly w: PauseGen; readonly r: PauseGen },
  ) {
    const names = ['mem_wr_addr', 'mem_wr_data', 'mem_wr_strb', 'mem_wr_valid', 'mem_wr_ready', 'mem_rd_addr', 'mem_rd_valid', 'mem_rd_ready', 'mem_rd_data_valid', 'mem_rd_data'];
    this.p = Object.fromEntries(names.map((n) => [n, model.handle(n)]));
    const full = (1n << BigInt(W)) - 1n;
    this.wq = writes.flat().map((addr) => {
      let strb = r.bool(0.7) ? full : BigInt(r.u32()) & full;
      if (strb === 0n) strb = 1n << BigInt(r.int(0, W - 1));
      return { addr, data: r.bytes(W), strb };
    });
    this.rq = reads.flat();
    model.pokeNumber(this.p.mem_wr_valid!, 0);
    model.pokeNumber(this.p.mem_rd_valid!, 0);
  }

  /** Beats not yet taken, reads and writes. */
  get pending(): number {
    return this.wq.length + this.rq.length;
  }

  get done(): boolean {
    return !this.wq.length && !this.rq.length && !this.wOffer && this.rOffer === null && this.readsBack === this.readsTaken;
  }

  drive(): void {
    const { model: m, p } = this;
    // A write is not offered over an outstanding read of its beat, nor beside a read of it on offer.
    if (!this.wOffer && this.wq.length && !this.pauses.w.next()) {
      const b = this.wq[0]!;
      if (!this.outstanding.get(b.addr) && this.rOffer !== b.addr) this.wOffer = this.wq.shift()!;
    }
    if (this.rOffer === null && this.rq.length && !this.pauses.r.next() && this.wOffer?.addr !== this.rq[0]) this.rOffer = this.rq.shift()!;
    const w = this.wOffer;
    m.pokeNumber(p.mem_wr_valid!, w ? 1 : 0);
    m.poke(p.mem_wr_addr!, w ? w.addr : this.r.u64());
    m.poke(p.mem_wr_data!, w ? w.data : this.r.bytes(this.W));
    m.poke(p.mem_wr_strb!, w ? w.strb : BigInt(this.r.u32()) & ((1n << BigInt(this.W)) - 1n));
    m.pokeNumber(p.mem_rd_valid!, this.rOffer !== null ? 1 : 0);
    m.poke(p.mem_rd_addr!, this.rOffer ?? this.r.u64() & ~BigInt(this.W - 1));
  }

  sample(): void {
    const { model: m, p } = this;
    const pre = (n: string) => m.peekPreNumber(p[n]!);
    // Read data first: it answers reads of earlier cycles.
    if (pre('mem_rd_data_valid') === 1) {
      const got = m.peekPreBytes(p.mem_rd_data!);
      const want = this.expected.shift();
      this.readsBack++;
      if (!want) this.violations.push(`read data with no read outstanding at cycle ${this.cycle}`);
      else {
        this.outstanding.set(want.addr, this.outstanding.get(want.addr)! - 1);
        if (Buffer.compare(got, want.data) !== 0 && this.mismatches.length < 20) {
          this.mismatches.push({ what: `read ${this.readsBack - 1} of 0x${want.addr.toString(16)} (requested at cycle ${want.cycle})`, expected: hex(want.data), actual: hex(got), cycle: this.cycle });
        }
      }
    }
    // A read sees the writes of earlier cycles, not this one's.
    if (this.rOffer !== null && pre('mem_rd_ready') === 1) {
      this.expected.push({ addr: this.rOffer, data: this.ref.read(this.rOffer, this.W), cycle: this.cycle });
      this.outstanding.set(this.rOffer, (this.outstanding.get(this.rOffer) ?? 0) + 1);
      this.readsTaken++;
      this.rOffer = null;
    }
    if (this.wOffer && pre('mem_wr_ready') === 1) {
      const b = this.wOffer;
      for (let j = 0; j < this.W; j++) if ((b.strb >> BigInt(j)) & 1n) this.ref.write(b.addr + BigInt(j), b.data.subarray(j, j + 1));
      this.writes.push(b);
      this.wOffer = null;
    }
    this.cycle++;
  }
}

export function cosimAxiMem(opts: AxiMemCosimOptions): AxiMemCosimResult {
  const W = opts.width;
  const module = opts.module ?? `rnic_axi_mem_w${W}`;
  const r = prng(opts.seed);
  const bench = new DutBench(...DutBench.opening(module, opts.seed, dutSelection(opts)));
  const { model } = bench;
  const maxBurst = opts.maxBurst ?? Number(bench.src?.params.maxBurst ?? 256);
  const pause = opts.pause ?? 0.3;
  const chance = () => (pause > 0 ? new Chance(r, pause) : never());
  const slave = bench.add(
    new AxiMemorySlave(model, r, {
      width: W, maxBurst, awPause: chance(), wPause: chance(), arPause: chance(), bPause: chance(), rPause: chance(),
      latency: opts.latency ?? { min: 1, max: 24 }, reorder: opts.reorder ?? true, errorRate: opts.errorRate ?? 0,
    }),
  );
  // A few pages at a random base: high address bits 0 and 1 somewhere, the page bits compared.
  const base = (r.u64() & ~0xfffn & ((1n << 63n) - 1n)) | (1n << 62n);
  const pages = 3;
  const runs = opts.runs ?? 200;
  const native = bench.add(new NativeSide(model, r, W, runsOf(r, W, base, pages, runs), runsOf(r, W, base, pages, runs), { w: chance(), r: chance() }));
  const h = (n: string) => model.handle(n);
  bench.reset();
  const timer = bench.timer();
  const idle = h('idle');
  const pending = native.pending;
  const mismatches: AxiMemMismatch[] = [];
  try {
    // Every beat within 40 cycles on average (pauses, latency), whatever the DUT's sizes.
    bench.until(() => native.done && slave.idle && model.peekPreNumber(idle) === 1, 40 * (pending + 100), `${module} to finish its reads and writes`);
    bench.run(4);
  } catch (e) {
    mismatches.push({ what: 'the run did not finish', expected: 'every read answered, every write answered on B', actual: (e as Error).message, cycle: model.cycles });
  }
  const cycles = timer.stop().cycles;
  mismatches.unshift(...native.mismatches);
  const errored = (opts.errorRate ?? 0) > 0;
  if (!errored) {
    // Every W beat against the native write beats, in order (one write ID: W in issue order).
    const n = Math.max(native.writes.length, slave.writes.length);
    for (let i = 0; i < n && mismatches.length < 20; i++) {
      const a = native.writes[i];
      const b = slave.writes[i];
      if (!a || !b || a.addr !== b.addr || a.strb !== b.strb) {
        mismatches.push({ what: `W beat ${i}`, expected: a ? `0x${a.addr.toString(16)} strb 0x${a.strb.toString(16)}` : '(none)', actual: b ? `0x${b.addr.toString(16)} strb 0x${b.strb.toString(16)}` : '(none)', cycle: b?.cycle ?? cycles });
        break;
      }
    }
    const span = pages * 4096 + 4096;
    const want = native.ref.read(base, span);
    const have = slave.memory.read(base, span);
    const k = want.findIndex((x, i) => x !== have[i]);
    if (k >= 0) mismatches.push({ what: `memory at 0x${(base + BigInt(k)).toString(16)}`, expected: hex(want.subarray(k, k + 16)), actual: hex(have.subarray(k, k + 16)), cycle: cycles });
  }
  const counted = model.peekNumber(h('err_count'));
  const result: AxiMemCosimResult = {
    dut: 'axi_mem',
    module,
    width: W,
    seed: opts.seed,
    writeBeats: native.writes.length,
    readBeats: native.readsBack,
    cycles,
    mismatches: mismatches.length,
    firstMismatch: mismatches[0] ?? null,
    violations: [...slave.faults, ...native.violations, ...bench.broken],
    stats: slave.stats,
    errors: { injected: slave.errors.write + slave.errors.read, counted, valid: model.peekNumber(h('err_valid')) === 1, code: model.peekNumber(h('err_code')) },
  };
  model.close();
  return result;
}

/**
 * Beats per cycle through the adapter with nothing pausing and a fixed slave latency: `beats`
 * consecutive write beats offered back to back (W beats over their window), and as many reads (read
 * data beats over theirs), each on a fresh instance.
 */
export function axiMemRate(width: number, o: { readonly beats?: number; readonly latency?: number; readonly module?: string } = {}): { readonly writeBeatsPerCycle: number; readonly readBeatsPerCycle: number; readonly write: AxiMemoryStats; readonly read: AxiMemoryStats } {
  const W = width;
  const module = o.module ?? `rnic_axi_mem_w${W}`;
  const beats = o.beats ?? 1024;
  const L = o.latency ?? 4;
  const addrs = [Array.from({ length: beats }, (_, i) => 0x10_0000n + BigInt(i * W))];
  const run = (writes: bigint[][], reads: bigint[][]) => {
    const r = prng(0xa71);
    const bench = new DutBench(...DutBench.opening(module, 1, {}));
    const { model } = bench;
    const slave = bench.add(new AxiMemorySlave(model, r, { width: W, latency: { min: L, max: L }, reorder: false }));
    const native = bench.add(new NativeSide(model, r, W, writes, reads, { w: never(), r: never() }));
    const outAt: number[] = [];
    const dv = model.handle('mem_rd_data_valid');
    bench.add({ sample: () => void (model.peekPreNumber(dv) === 1 && outAt.push(model.cycles)) });
    bench.reset();
    bench.until(() => native.done && slave.idle, 100 * beats, `${module} to finish`);
    model.close();
    const problems = [...slave.faults, ...native.violations, ...native.mismatches.map((x) => x.what)];
    if (problems.length) throw new Error(`${module} rate run: ${problems.slice(0, 5).join('; ')}`);
    const at = writes.length ? slave.writes.map((x) => x.cycle) : outAt;
    return { perCycle: beats / (at[at.length - 1]! - at[0]! + 1), stats: slave.stats };
  };
  const w = run(addrs, []);
  const rd = run([], addrs);
  return { writeBeatsPerCycle: w.perCycle, readBeatsPerCycle: rd.perCycle, write: w.stats, read: rd.stats };
}
