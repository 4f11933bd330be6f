import { HostMemory } from '../../ts-model/memory/host-memory';
import type { Prng } from '../../ts-model/util/prng';
import type { Component } from '../cocotb/component';
import { never, type PauseGen } from '../cocotb/pause';
import type { PortHandle, SimModel } from '../verilator/model';
import type { Memory } from './memory';
import type { WriteBeat } from './write-port';

/**
 * An AXI4 slave memory (cocotbext-axi's AxiRam, in the project's component form) over the host
 * memory the native ports see (memory.ts), behind a DUT's AXI4 master `m_axi_*`:
 *
 * - AW, W and AR take their handshakes when their pause generators let them (ready low otherwise);
 *   B and R are offered when theirs let them, and held until taken.
 * - Each burst is answered after a latency drawn per burst, uniform in [min, max] cycles: a write
 *   burst from its last W beat (and its AW), a read burst from its AR. With `reorder` (the default)
 *   answers of different IDs overtake each other as their latencies fall, and R beats of different
 *   IDs interleave (AXI4 allows both); one ID's answers stay in order, as AXI4 requires.
 * - A read burst reads memory at its AR handshake (the earliest an AXI slave may), a write burst
 *   lands when its B is offered (the latest): a master that issues a read before the write it must
 *   see is answered has it read stale data.
 * - `errorRate`: a burst answered SLVERR or DECERR instead (a failed write is not written; a failed
 *   read returns garbage), counted in `errors`.
 *
 * Protocol checks (each a line in `faults`): AxVALID dropped or the AW/W/AR payload changed before
 * its handshake; AxBURST other than INCR; AxSIZE other than the data width; AxLEN + 1 above
 * `maxBurst`; an unaligned start; a burst crossing a 4 KiB boundary; a W beat for a burst not yet
 * offered on AW; WLAST not on a burst's last beat. The slave side keeps its own rules by
 * construction: RLAST on a burst's last beat, one B per burst, after its AW and last W.
 *
 * What a testbench reads: `writes` (every W beat, its address, strobe and cycle, as the native
 * write port logs them), `memory`, `faults`, `idle` (nothing in flight), and `stats` (bursts, beats,
 * the most read beats in flight, how often an answer overtook an older one).
 */
export interface AxiMemoryOptions {
  /** Octets per beat (the data width / 8). */
  readonly width: number;
  /** Port name prefix (default 'm_axi_'). */
  readonly prefix?: string;
  /** What the bursts read and write (default: an empty HostMemory). */
  readonly memory?: Memory;
  /** Largest AxLEN + 1 accepted (default 256). */
  readonly maxBurst?: number;
  readonly awPause?: PauseGen;
  readonly wPause?: PauseGen;
  readonly arPause?: PauseGen;
  /** Hold off offering a B / an R beat in a cycle. */
  readonly bPause?: PauseGen;
  readonly rPause?: PauseGen;
  /** Cycles from a write burst's last W beat, or a read's AR, to its answer (default 1..1). */
  readonly latency?: { readonly min: number; readonly max: number };
  /** Answers of different IDs in any order, R beats of different IDs interleaved (default true). */
  readonly reorder?: boolean;
  /** Probability that a burst is answered SLVERR or DECERR (default 0). */
  readonly errorRate?: number;
  readonly report?: (violation: string) => void;
}

/** What RnicBench and the rate harnesses read of host memory behind the DUT, native or AXI4. */
export interface HostMemoryModel {
  memory: Memory;
  readonly writes: WriteBeat[];
  readonly faults: string[];
  readonly idle: boolean;
  clear(memory?: Memory): void;
}

export interface AxiMemoryStats {
  writeBursts: number;
  writeBeats: number;
  readBursts: number;
  readBeats: number;
  /** Bursts of each length (AxLEN + 1), writes and reads. */
  readonly writeLengths: Map<number, number>;
  readonly readLengths: Map<number, number>;
  /** The most read beats issued on AR and not yet taken on R at once. */
  maxReadBeatsInFlight: number;
  /** The most read bursts in flight at once. */
  maxReadBurstsInFlight: number;
  /** A read burst's first R beat offered while an older burst (another ID) was unanswered or part-way. */
  readOvertakes: number;
  /** An R beat of one burst offered between two beats of another. */
  readInterleaves: number;
}

export const AXI_RESP = Object.freeze({ OKAY: 0, EXOKAY: 1, SLVERR: 2, DECERR: 3 });
const INCR = 1;
const BOUNDARY = 4096n;

interface WriteBurst {
  readonly log: { readonly lastBeat: number; answered: number | null };
  readonly id: number;
  readonly addr: bigint;
  readonly len: number;
  readonly beats: { readonly data: Uint8Array; readonly strb: bigint }[];
  due: number;
  resp: number;
}

interface ReadBurst {
  readonly seq: number;
  readonly id: number;
  readonly len: number;
  readonly beats: Uint8Array[];
  readonly due: number;
  readonly resp: number;
  next: number;
}

type Handles = Record<string, PortHandle>;

export class AxiMemorySlave implements Component, HostMemoryModel {
  memory: Memory;
  readonly faults: string[] = [];
  readonly writes: WriteBeat[] = [];
  readonly errors = { write: 0, read: 0 };
  /** Every write burst in W order: the cycle of its last W beat, and of its B (null until offered). */
  readonly writeBursts: { readonly lastBeat: number; answered: number | null }[] = [];
  readonly stats: AxiMemoryStats = {
    writeBursts: 0, writeBeats: 0, readBursts: 0, readBeats: 0, writeLengths: new Map(), readLengths: new Map(),
    maxReadBeatsInFlight: 0, maxReadBurstsInFlight: 0, readOvertakes: 0, readInterleaves: 0,
  };
  private readonly p: Handles;
  private readonly W: number;
  private readonly maxBurst: number;
  /** Cycles from a burst to its answer (the constructor's `latency`; a test may change it between runs). */
  latency: { readonly min: number; readonly max: number };
  private readonly reorder: boolean;
  private readonly pause: Record<'aw' | 'w' | 'ar' | 'b' | 'r', PauseGen>;
  private readonly report: (v: string) => void;
  /** Cycles sampled so far. */
  private cycle = 0;
  /** AWs taken, in order; W bursts complete, in order (their beats). */
  private readonly aw: { id: number; addr: bigint; len: number }[] = [];
  private readonly wDone: { data: Uint8Array; strb: bigint }[][] = [];
  private wBeats: { data: Uint8Array; strb: bigint }[] = [];
  /** Bursts whose AW and W are both in, index into aw / wDone: the next to pair. */
  private paired = 0;
  private readonly bQueue: WriteBurst[] = [];
  private bOffered: WriteBurst | null = null;
  private readonly rQueue: ReadBurst[] = [];
  private rOffered: ReadBurst | null = null;
  private rLastBurst: ReadBurst | null = null;
  private rSeq = 0;
  /** Payloads offered and not taken at the last edge, per channel. */
  private readonly held: Record<'aw' | 'w' | 'ar', string | null> = { aw: null, w: null, ar: null };
  private ready = { aw: false, w: false, ar: false };

  constructor(
    private readonly model: SimModel,
    private readonly r: Prng,
    private readonly o: AxiMemoryOptions,
  ) {
    const prefix = o.prefix ?? 'm_axi_';
    const names = [
      'awid', 'awaddr', 'awlen', 'awsize', 'awburst', 'awcache', 'awprot', 'awvalid', 'awready',
      'wdata', 'wstrb', 'wlast', 'wvalid', 'wready', 'bid', 'bresp', 'bvalid', 'bready',
      'arid', 'araddr', 'arlen', 'arsize', 'arburst', 'arcache', 'arprot', 'arvalid', 'arready',
      'rid', 'rdata', 'rresp', 'rlast', 'rvalid', 'rready',
    ];
    this.p = Object.fromEntries(names.map((n) => [n, model.handle(`${prefix}${n}`)]));
    this.W = o.width;
    if (this.p.wdata!.width !== 8 * this.W) throw new Error(`AxiMemorySlave: ${prefix}wdata is ${this.p.wdata!.width} bits, not ${8 * this.W}`);
    this.memory = o.memory ?? new HostMemory();
    this.maxBurst = o.maxBurst ?? 256;
    this.latency = o.latency ?? { min: 1, max: 1 };
    this.reorder = o.reorder ?? true;
    this.report = o.report ?? ((v) => void (this.faults.length < 20 && this.faults.push(v)));
    this.pause = { aw: o.awPause ?? never(), w: o.wPause ?? never(), ar: o.arPause ?? never(), b: o.bPause ?? never(), r: o.rPause ?? never() };
  }

  /** Nothing in flight: every burst offered is answered, no W beat waits for its burst. */
  get idle(): boolean {
    return this.bQueue.length === 0 && !this.bOffered && this.rQueue.length === 0 && this.wBeats.length === 0 && this.paired === this.aw.length && this.paired === this.wDone.length;
  }

  /** A fresh memory and write log (bursts in flight keep going: call it when idle). */
  clear(memory: Memory = new HostMemory()): void {
    this.memory = memory;
    this.writes.length = 0;
  }

  private fault(what: string): void {
    this.report(`${what} at cycle ${this.cycle}`);
  }

  drive(): void {
    const { model: m, p } = this;
    this.ready = { aw: !this.pause.aw.next(), w: !this.pause.w.next(), ar: !this.pause.ar.next() };
    m.pokeNumber(p.awready!, this.ready.aw ? 1 : 0);
    m.pokeNumber(p.wready!, this.ready.w ? 1 : 0);
    m.pokeNumber(p.arready!, this.ready.ar ? 1 : 0);
    // B: the offered one until taken; else one of the due bursts (the oldest of its ID).
    if (!this.bOffered && !this.pause.b.next()) {
      const b = this.choose(this.bQueue.filter((x) => x.due <= this.cycle), this.bQueue);
      if (b) {
        this.bQueue.splice(this.bQueue.indexOf(b), 1);
        if (b.resp === AXI_RESP.OKAY) this.commit(b);
        b.log.answered = this.model.cycles + 1;
        this.bOffered = b;
      }
    }
    const b = this.bOffered;
    m.pokeNumber(p.bvalid!, b ? 1 : 0);
    m.pokeNumber(p.bid!, b?.id ?? 0);
    m.pokeNumber(p.bresp!, b?.resp ?? 0);
    // R: the offered beat until taken; else a beat of a due burst.
    if (!this.rOffered && !this.pause.r.next()) {
      const due = this.rQueue.filter((x) => x.due <= this.cycle);
      const rb = this.reorder ? this.choose(due, this.rQueue) : due[0] === this.rQueue[0] ? due[0] : undefined;
      if (rb) {
        if (rb.next === 0 && this.rQueue.some((x) => x.seq < rb.seq && x.id !== rb.id)) this.stats.readOvertakes++;
        if (this.rLastBurst && this.rLastBurst !== rb && this.rLastBurst.next > 0 && this.rLastBurst.next <= this.rLastBurst.len) this.stats.readInterleaves++;
        this.rOffered = rb;
      }
    }
    const rb = this.rOffered;
    m.pokeNumber(p.rvalid!, rb ? 1 : 0);
    if (rb) {
      m.pokeNumber(p.rid!, rb.id);
      m.pokeNumber(p.rresp!, rb.resp);
      m.pokeNumber(p.rlast!, rb.next === rb.len ? 1 : 0);
      m.poke(p.rdata!, rb.beats[rb.next]!);
    } else {
      m.pokeNumber(p.rlast!, this.r.int(0, 1));
      m.poke(p.rdata!, this.r.bytes(this.W));
    }
  }

  /**
   * The burst to answer among the due ones: each ID's oldest only (AXI4 keeps one ID in order);
   * with reorder any of those, else the oldest overall (and only when it is due).
   */
  private choose<T extends { readonly id: number }>(due: readonly T[], all: readonly T[]): T | undefined {
    const heads = due.filter((x) => all.find((y) => y.id === x.id) === x);
    if (!heads.length) return undefined;
    if (!this.reorder) return heads[0] === all[0] ? heads[0] : undefined;
    return heads[this.r.int(0, heads.length - 1)];
  }

  /** A write burst's beats into memory, the octets their strobes enable. */
  private commit(b: WriteBurst): void {
    b.beats.forEach((beat, i) => {
      const addr = b.addr + BigInt(i * this.W);
      let j = 0;
      while (j < this.W) {
        if (((beat.strb >> BigInt(j)) & 1n) === 0n) {
          j++;
          continue;
        }
        let k = j;
        while (k < this.W && ((beat.strb >> BigInt(k)) & 1n) === 1n) k++;
        this.memory.write(addr + BigInt(j), beat.data.subarray(j, k));
        j = k;
      }
    });
  }

  private resp(): number {
    const rate = this.o.errorRate ?? 0;
    return rate > 0 && this.r.bool(rate) ? this.r.pick([AXI_RESP.SLVERR, AXI_RESP.DECERR]) : AXI_RESP.OKAY;
  }

  private delay(): number {
    return this.r.int(this.latency.min, this.latency.max);
  }

  /** The checks every AW and AR gets at its handshake. */
  private checkBurst(ch: 'aw' | 'ar', addr: bigint, len: number, size: number, burst: number): void {
    const W = BigInt(this.W);
    if (burst !== INCR) this.fault(`${ch}burst ${burst}, not INCR`);
    if (1 << size !== this.W) this.fault(`${ch}size ${size}, not ${Math.log2(this.W)} (${this.W} octets)`);
    if (len + 1 > this.maxBurst) this.fault(`${ch}len ${len}: ${len + 1} beats, more than ${this.maxBurst}`);
    if (addr % W !== 0n) this.fault(`${ch}addr 0x${addr.toString(16)} not a multiple of ${this.W}`);
    const end = addr + BigInt(len + 1) * W - 1n;
    if (addr / BOUNDARY !== end / BOUNDARY) this.fault(`${ch} burst 0x${addr.toString(16)}..0x${end.toString(16)} crosses a 4 KiB boundary`);
  }

  /** Valid held and the payload unchanged until the handshake (A3.2.1). */
  private stable(ch: 'aw' | 'w' | 'ar', valid: boolean, payload: () => string, fire: boolean): void {
    const now = valid ? payload() : null;
    if (this.held[ch] !== null && now !== this.held[ch]) this.fault(`${ch}valid dropped or ${ch} payload changed before its handshake`);
    this.held[ch] = valid && !fire ? now : null;
  }

  sample(): void {
    const { model: m, p } = this;
    const pre = (h: string) => m.peekPreNumber(p[h]!);
    const big = (h: string) => m.peekPre(p[h]!);
    // AW
    const awv = pre('awvalid') === 1;
    const awFire = awv && this.ready.aw;
    this.stable('aw', awv, () => ['awid', 'awaddr', 'awlen', 'awsize', 'awburst', 'awcache', 'awprot'].map((n) => big(n)).join('/'), awFire);
    // W: a beat belongs to the burst after the last complete one; its AW must be taken or offered now.
    const wv = pre('wvalid') === 1;
    const wFire = wv && this.ready.w;
    this.stable('w', wv, () => `${big('wdata')}/${big('wstrb')}/${pre('wlast')}`, wFire);
    if (wFire) {
      const k = this.wDone.length;
      const burst = k < this.aw.length ? this.aw[k]! : k === this.aw.length && awv ? { id: pre('awid'), addr: big('awaddr'), len: pre('awlen') } : null;
      const i = this.wBeats.length;
      const data = m.peekPreBytes(p.wdata!);
      const strb = big('wstrb');
      this.wBeats.push({ data, strb });
      if (!burst) this.fault(`W beat ${i} of burst ${k} before its AW was offered`);
      else {
        const last = pre('wlast') === 1;
        if (last !== (i === burst.len)) this.fault(`wlast ${Number(last)} on beat ${i} of a ${burst.len + 1}-beat burst`);
        this.writes.push({ addr: burst.addr + BigInt(i * this.W), strb, cycle: m.cycles });
        this.stats.writeBeats++;
        if (i === burst.len) {
          this.wDone.push(this.wBeats.splice(0));
          this.writeBursts.push({ lastBeat: m.cycles, answered: null });
        }
      }
      // Without its AW the burst's length is unknown: take WLAST as its end.
      if (!burst && pre('wlast') === 1) {
        this.wDone.push(this.wBeats.splice(0));
        this.writeBursts.push({ lastBeat: m.cycles, answered: null });
      }
    }
    if (awFire) {
      const addr = big('awaddr');
      const len = pre('awlen');
      this.checkBurst('aw', addr, len, pre('awsize'), pre('awburst'));
      this.aw.push({ id: pre('awid'), addr, len });
      this.stats.writeBursts++;
      this.stats.writeLengths.set(len + 1, (this.stats.writeLengths.get(len + 1) ?? 0) + 1);
    }
    // Bursts with both halves in: answered after their latency.
    while (this.paired < this.aw.length && this.paired < this.wDone.length) {
      const a = this.aw[this.paired]!;
      const beats = this.wDone[this.paired]!;
      if (beats.length !== a.len + 1) this.fault(`write burst ${this.paired}: ${beats.length} W beats for awlen ${a.len}`);
      this.bQueue.push({ log: this.writeBursts[this.paired]!, id: a.id, addr: a.addr, len: a.len, beats, due: this.cycle + this.delay(), resp: this.resp() });
      if (this.bQueue.at(-1)!.resp !== AXI_RESP.OKAY) this.errors.write++;
      this.paired++;
    }
    // B
    if (this.bOffered && pre('bready') === 1) this.bOffered = null;
    // AR: memory read now, answered after the latency.
    const arv = pre('arvalid') === 1;
    const arFire = arv && this.ready.ar;
    this.stable('ar', arv, () => ['arid', 'araddr', 'arlen', 'arsize', 'arburst', 'arcache', 'arprot'].map((n) => big(n)).join('/'), arFire);
    if (arFire) {
      const addr = big('araddr');
      const len = pre('arlen');
      this.checkBurst('ar', addr, len, pre('arsize'), pre('arburst'));
      const resp = this.resp();
      const beats = Array.from({ length: len + 1 }, (_, i) => (resp === AXI_RESP.OKAY ? this.memory.read(addr + BigInt(i * this.W), this.W) : this.r.bytes(this.W)));
      if (resp !== AXI_RESP.OKAY) this.errors.read += len + 1;
      this.rQueue.push({ seq: this.rSeq++, id: pre('arid'), len, beats, due: this.cycle + this.delay(), resp, next: 0 });
      this.stats.readBursts++;
      this.stats.readLengths.set(len + 1, (this.stats.readLengths.get(len + 1) ?? 0) + 1);
      const inFlight = this.rQueue.reduce((n, x) => n + x.len + 1 - x.next, 0);
      this.stats.maxReadBeatsInFlight = Math.max(this.stats.maxReadBeatsInFlight, inFlight);
      this.stats.maxReadBurstsInFlight = Math.max(this.stats.maxReadBurstsInFlight, this.rQueue.length);
    }
    // R
    const rb = this.rOffered;
    if (rb && pre('rready') === 1) {
      rb.next++;
      this.stats.readBeats++;
      this.rLastBurst = rb;
      if (rb.next > rb.len) this.rQueue.splice(this.rQueue.indexOf(rb), 1);
      this.rOffered = null;
    }
    this.cycle++;
  }
}
