import { HostMemory } from '../../ts-model/memory/host-memory';
import { hex } from '../../ts-model/util/hex';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSource } from '../cocotb/axis';
import type { RecordSource } from '../cocotb/record-source';
import { DutBench } from '../harness/dut-bench';
import type { HostMemoryPort } from '../harness/host-memory-port';
import { dutSelection, type DutSelection } from '../harness/open-dut';

/**
 * Co-simulation of ddp_rx_place_w<W> (hdl-gen/blocks/ddp-rx-place.ts) against a TypeScript
 * sparse host memory.
 *
 * Random packets (1..3000 octets; some a multiple of W, some 1..W) go into s_axis as ddp_rx_hdr
 * sends them (full beats, the last one 2^k − 1), with random gaps. Each gets a command: ~20%
 * discard, the rest at a random address (W-aligned or not, some overlapping earlier packets so
 * the write order matters, some ending exactly at 2^64). A command is offered early (before its
 * packet), during it (after its first beat) or after it (its last beat plus a random delay),
 * always in packet order; a few come thousands of cycles late. wr_ready is randomly low.
 *
 * Every write handshake is checked: wr_addr a multiple of W, wr_strb ≠ 0, every enabled octet
 * inside [addr, addr + len) of the packet it belongs to (writes are attributed to the placed
 * packets in order, each taking the W-blocks it touches), and wr_* held while wr_ready is low.
 * Late commands and wr_ready back-pressure fill the FIFO now and then (coverage `fifoFull`: cycles
 * with s_axis_tready low). The memory after all writes must equal the packets applied in order. `idle` must be 0 whenever
 * an accepted command has writes still to come or beats still to arrive, and 1 at the end.
 */
export interface DdpRxPlaceCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  readonly packets: number;
  /** Per-cycle pause probabilities (default 0.2; 0 = full rate). */
  readonly sourcePause?: number;
  readonly wrPause?: number;
  readonly cmdPause?: number;
  /** Every packet this long (throughput runs); else random lengths. */
  readonly length?: number;
  /** Address placement: 'aligned', 'unaligned' (never W-aligned) or 'random' (default). */
  readonly align?: 'aligned' | 'unaligned' | 'random';
  /** Share of discarded packets (default 0.2). */
  readonly discardRate?: number;
  /** Commands always offered early (before their packet): throughput runs. */
  readonly earlyCommands?: boolean;
}

/** The first thing that went wrong: a violation, or the first octet of memory that differs. */
export interface DdpRxPlaceMismatch {
  readonly what: string;
  /** When: the violation's cycle, or that of the write that last touched the differing octet (the end of the run if none did). */
  readonly cycle: number;
  readonly expected: string;
  readonly actual: string;
}

export interface DdpRxPlaceResult {
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly packets: number;
  readonly placed: number;
  readonly octets: number;
  readonly inputBeats: number;
  readonly writeBeats: number;
  readonly expectedWriteBeats: number;
  /** Octets of the final memory that differ from the packets applied in order. */
  readonly memoryMismatches: number;
  /** Protocol and security violations (misaligned, empty strobe, octet outside its packet, unstable, idle). */
  readonly violations: number;
  /** Enabled octets outside their packet's range (a subset of the violations). */
  readonly outside: number;
  readonly firstViolations: readonly string[];
  readonly firstMismatch?: DdpRxPlaceMismatch;
  /** Edges from the first input handshake to the last write handshake, both counted. */
  readonly cycles: number;
  readonly coverage: { readonly unaligned: number; readonly discarded: number; readonly early: number; readonly during: number; readonly after: number; readonly overlapping: number; readonly topOfMemory: number; readonly idleSeen: number; readonly fifoFull: number };
}

interface Packet {
  readonly data: Uint8Array;
  readonly addr: bigint;
  readonly discard: boolean;
  readonly when: 'early' | 'during' | 'after';
  readonly delay: number;
}

const TOP = 1n << 64n;

function makePackets(r: Prng, o: DdpRxPlaceCosimOptions): { packets: Packet[]; overlapping: number; topOfMemory: number } {
  const W = o.width;
  const packets: Packet[] = [];
  const regions: bigint[] = [];
  let overlapping = 0;
  let topOfMemory = 0;
  for (let i = 0; i < o.packets; i++) {
    const len = o.length ?? r.pick([r.int(1, W), W * r.int(1, 8), r.int(1, 4 * W), r.int(1, 3000), W * r.int(1, Math.floor(3000 / W))]);
    const kind = r.int(0, 9);
    let addr: bigint;
    if (kind === 0) {
      addr = TOP - BigInt(len) - BigInt(r.int(0, 2 * W)); // the very top of the address space
      topOfMemory++;
    } else if (kind <= 3 && regions.length > 0) {
      addr = r.pick(regions) + BigInt(r.int(0, 4096)); // near an earlier packet: overlaps
      overlapping++;
    } else {
      addr = r.u64() >> BigInt(r.int(0, 40));
      regions.push(addr);
    }
    const align = o.align ?? 'random';
    if (align === 'aligned' || (align === 'random' && r.bool(0.4))) addr -= addr % BigInt(W);
    else if (align === 'unaligned' && addr % BigInt(W) === 0n) addr -= BigInt(r.int(1, W - 1));
    if (addr < 0n) addr += BigInt(W);
    if (addr + BigInt(len) > TOP) addr = TOP - BigInt(len) - BigInt(align === 'aligned' ? (len % W === 0 ? 0 : W - (len % W)) : 0);
    packets.push({
      data: r.bytes(len),
      addr,
      discard: r.bool(o.discardRate ?? 0.2),
      when: o.earlyCommands ? 'early' : r.pick(['early', 'during', 'after', 'after'] as const),
      // Now and then very late: the FIFO fills and s_axis_tready drops.
      delay: r.bool(0.03) ? r.int(500, 3000) : r.bool(0.5) ? 0 : r.int(1, 60),
    });
  }
  return { packets, overlapping, topOfMemory };
}

/** Write beats a placed packet takes: the W-blocks [addr, addr + len) touches. */
const blocks = (p: Packet, W: number): number => Number((p.addr + BigInt(p.data.length) - 1n) / BigInt(W) - p.addr / BigInt(W)) + 1;

/**
 * The fixture of ddp_rx_place_w<W>: packets into s_axis, their commands on s_cmd_* (offered when
 * the packet's timing allows, after random gaps), the write port on a host memory with random
 * wr_ready; input progress tracked for the command timing and the idle checks.
 */
class PlaceBench extends DutBench {
  readonly packets: Packet[];
  readonly overlapping: number;
  readonly topOfMemory: number;
  readonly sAxis: AxisSource;
  readonly cmd: RecordSource<number>;
  readonly mem: HostMemoryPort;
  /** Input progress: beats, packets started and ended (by handshake), and when each ended. */
  inBeats = 0;
  started = 0;
  ended = 0;
  readonly endedAt: number[] = [];
  firstInputEdge = -1;
  /** Commands taken so far. */
  accepted = 0;

  constructor(o: DdpRxPlaceCosimOptions, report: (s: string) => void, onWrite: (addr: bigint, strb: bigint, data: Uint8Array, cycle: number) => void, sample: () => void) {
    super(...DutBench.opening(`ddp_rx_place_w${o.width}`, o.seed, dutSelection(o)));
    const { model } = this;
    const made = makePackets(this.r, o);
    this.packets = made.packets;
    this.overlapping = made.overlapping;
    this.topOfMemory = made.topOfMemory;
    this.sAxis = this.source('s_axis', { pause: this.pause(o.sourcePause ?? 0.2) });
    const wrPause = this.pause(o.wrPause ?? 0.2);
    const cmdPause = this.pause(o.cmdPause ?? 0.2);
    for (const p of this.packets) this.sAxis.send(p.data);
    const h = (n: string) => model.handle(n);
    const [inValid, inReady, inLast] = [h('s_axis_tvalid'), h('s_axis_tready'), h('s_axis_tlast')];
    let midPacket = false;
    // Before the handshakes of this edge are counted: the idle checks look at the state before it.
    this.add({
      sample: () => {
        sample();
        if (model.peekPreNumber(inValid) !== 1 || model.peekPreNumber(inReady) !== 1) return;
        if (this.firstInputEdge < 0) this.firstInputEdge = model.cycles - 1;
        this.inBeats++;
        if (!midPacket) this.started++;
        midPacket = model.peekPreNumber(inLast) !== 1;
        if (!midPacket) this.endedAt[this.ended++] = model.cycles;
      },
    });
    const mayOffer = (i: number): boolean => {
      const p = this.packets[i]!;
      if (p.when === 'early') return true;
      if (p.when === 'during') return this.started > i;
      return this.ended > i && model.cycles >= this.endedAt[i]! + p.delay;
    };
    this.cmd = this.recordSource('s_cmd', {
      gap: cmdPause,
      when: mayOffer,
      fields: (i) => ({ addr: this.packets[i]!.addr, discard: this.packets[i]!.discard }),
      onAccept: () => this.accepted++,
    });
    this.cmd.pushAll(this.packets.map((_, i) => i));
    this.mem = this.memory({ width: o.width, prefix: '', ports: 'write', memory: new HostMemory(), wrPause, report, onWrite: (w, data) => onWrite(w.addr, w.strb, data, w.cycle) });
    model.pokeNumber(h('wr_ready'), 0);
  }
}

export function cosimDdpRxPlace(o: DdpRxPlaceCosimOptions): DdpRxPlaceResult {
  const W = o.width;
  const BW = BigInt(W);
  const name = `ddp_rx_place_w${W}`;
  const violations: { text: string; cycle: number }[] = [];
  let nViolations = 0;
  let outside = 0;
  let tb: PlaceBench;
  const report = (s: string) => {
    nViolations++;
    if (violations.length < 20) violations.push({ text: /cycle \d+/.test(s) ? s : `${s} (cycle ${tb.model.cycles})`, cycle: tb.model.cycles });
  };
  // Writes: attributed in order to the placed (not discarded) packets.
  let placed: Packet[] = [];
  let wp = 0;
  let wpBeats = 0;
  let writeBeats = 0;
  let lastWriteEdge = -1;
  const written = new Map<bigint, number>();
  let idleSeen = 0;
  let fifoFull = 0;
  // placedBefore[i]: placed packets among the first i; cumBlocks[k]: write beats of the first k + 1 placed.
  const placedBefore = [0];
  const cumBlocks: number[] = [];
  const onWrite = (addr: bigint, strb: bigint, _data: Uint8Array, cycle: number) => {
    lastWriteEdge = cycle - 1;
    writeBeats++;
    const p = placed[wp];
    const lo = p ? p.addr : 0n;
    const hi = p ? p.addr + BigInt(p.data.length) : 0n;
    const base = addr - (addr % BW);
    written.set(base, cycle);
    for (let j = 0; j < W; j++) {
      if (((strb >> BigInt(j)) & 1n) === 0n) continue;
      const a = base + BigInt(j);
      if (a < lo || a >= hi) {
        outside++;
        report(`octet at ${a.toString(16)} outside packet ${p ? tb.packets.indexOf(p) : 'none'} [${lo.toString(16)}, ${hi.toString(16)})`);
      }
    }
    if (p && ++wpBeats === blocks(p, W)) {
      wp++;
      wpBeats = 0;
    }
  };
  const idleCheck = () => {
    const m = tb.model;
    // idle, against the state before this edge's handshakes.
    if (m.peekPreNumber(m.handle('idle')) === 1) {
      idleSeen++;
      // Placed commands accepted: those among the first `accepted` packets; writes still due?
      const placedAccepted = placedBefore[tb.accepted]!;
      const dueBeats = placedAccepted > 0 ? cumBlocks[placedAccepted - 1]! : 0;
      if (writeBeats < dueBeats) report(`idle = 1 with ${dueBeats - writeBeats} write beats of accepted commands outstanding`);
      if (tb.ended < tb.accepted) report(`idle = 1 while packet ${tb.ended} of an accepted command has not fully arrived`);
    }
    if (m.peekPreNumber(m.handle('s_axis_tvalid')) === 1 && m.peekPreNumber(m.handle('s_axis_tready')) === 0) fifoFull++;
  };
  tb = new PlaceBench(o, report, onWrite, idleCheck);
  const { model, packets, overlapping, topOfMemory } = tb;
  placed = packets.filter((p) => !p.discard);
  const expectedWriteBeats = placed.reduce((n, p) => n + blocks(p, W), 0);
  for (const p of packets) placedBefore.push(placedBefore[placedBefore.length - 1]! + (p.discard ? 0 : 1));
  placed.forEach((p, k) => cumBlocks.push((k ? cumBlocks[k - 1]! : 0) + blocks(p, W)));

  const totalBeats = packets.reduce((n, p) => n + Math.ceil(p.data.length / W), 0);
  const idle = model.handle('idle');
  tb.reset();
  try {
    tb.until(() => tb.cmd.idle && tb.ended === packets.length && writeBeats >= expectedWriteBeats, 20 * totalBeats + 10_000, `${packets.length} packets through ${name}`);
    tb.until(() => model.peekNumber(idle) === 1, 200, `${name} idle at the end`);
  } catch (e) {
    report((e as Error).message);
  }
  tb.run(30); // anything extra shows up below
  if (model.peekNumber(idle) !== 1) report('idle = 0 at the end');
  if (writeBeats !== expectedWriteBeats) report(`${writeBeats} write beats, expected ${expectedWriteBeats}`);
  const end = model.cycles;
  tb.close();

  // The expected memory: the placed packets applied in order.
  const want = new Map<bigint, Uint8Array>();
  for (const p of placed) {
    for (let i = 0; i < p.data.length; i++) {
      const a = p.addr + BigInt(i);
      const base = a - (a % BW);
      let word = want.get(base);
      if (!word) want.set(base, (word = new Uint8Array(W)));
      word[Number(a % BW)] = p.data[i]!;
    }
  }
  let memoryMismatches = 0;
  let firstMemory: DdpRxPlaceMismatch | undefined;
  for (const k of new Set([...want.keys(), ...written.keys()])) {
    const a = want.get(k) ?? new Uint8Array(W);
    const b = tb.mem.memory.read(k, W);
    for (let j = 0; j < W; j++) {
      if (a[j] === b[j]) continue;
      memoryMismatches++;
      firstMemory ??= { what: `memory at 0x${(k + BigInt(j)).toString(16)}`, cycle: written.get(k) ?? end, expected: hex(a.subarray(j)), actual: hex(b.subarray(j)) };
    }
  }
  const firstViolation = violations[0] && { what: 'violation', cycle: violations[0].cycle, expected: 'no violation', actual: violations[0].text };
  const firstMismatch = [firstViolation, firstMemory].filter((x): x is DdpRxPlaceMismatch => x !== undefined).sort((x, y) => x.cycle - y.cycle)[0];
  return {
    module: name,
    width: W,
    seed: o.seed,
    packets: packets.length,
    placed: placed.length,
    octets: packets.reduce((n, p) => n + p.data.length, 0),
    inputBeats: tb.inBeats,
    writeBeats,
    expectedWriteBeats,
    memoryMismatches,
    violations: nViolations,
    outside,
    firstViolations: violations.map((v) => v.text),
    ...(firstMismatch && { firstMismatch }),
    cycles: lastWriteEdge - tb.firstInputEdge + 1,
    coverage: {
      unaligned: packets.filter((p) => p.addr % BW !== 0n).length,
      discarded: packets.length - placed.length,
      early: packets.filter((p) => p.when === 'early').length,
      during: packets.filter((p) => p.when === 'during').length,
      after: packets.filter((p) => p.when === 'after').length,
      overlapping,
      topOfMemory,
      idleSeen,
      fifoFull,
    },
  };
}
