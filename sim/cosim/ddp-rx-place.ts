import { prng, type Prng } from '../../ts-model/util/prng';
import { random as randomPause } from '../cocotb/pause';
import { Testbench } from '../cocotb/testbench';
import { openDut } from './dut';

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
export interface DdpRxPlaceCosimOptions {
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
  readonly vcd?: string;
  readonly mutate?: (verilog: string) => string;
}

export interface DdpRxPlaceResult {
  readonly module: string;
  readonly width: number;
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

export function cosimDdpRxPlace(o: DdpRxPlaceCosimOptions): DdpRxPlaceResult {
  const W = o.width;
  const BW = BigInt(W);
  const name = `ddp_rx_place_w${W}`;
  const { model } = openDut(name, { ...(o.vcd !== undefined && { vcd: o.vcd }), ...(o.mutate && { mutate: o.mutate }) });
  const tb = new Testbench(model);
  const r = prng(o.seed);
  const { packets, overlapping, topOfMemory } = makePackets(r, o);
  const source = tb.source('s_axis', { pause: randomPause(r.u32(), o.sourcePause ?? 0.2) });
  const wrPause = randomPause(r.u32(), o.wrPause ?? 0.2);
  const cmdPause = randomPause(r.u32(), o.cmdPause ?? 0.2);
  for (const p of packets) source.send(p.data);
  const h = (n: string) => model.handle(n);
  const P = {
    inValid: h('s_axis_tvalid'), inReady: h('s_axis_tready'), inLast: h('s_axis_tlast'),
    cmdValid: h('s_cmd_valid'), cmdReady: h('s_cmd_ready'), cmdAddr: h('s_cmd_addr'), cmdDiscard: h('s_cmd_discard'),
    wrValid: h('wr_valid'), wrReady: h('wr_ready'), wrAddr: h('wr_addr'), wrData: h('wr_data'), wrStrb: h('wr_strb'), idle: h('idle'),
  };

  const violations: string[] = [];
  let nViolations = 0;
  let outside = 0;
  const report = (s: string) => {
    nViolations++;
    if (violations.length < 20) violations.push(`${s} (cycle ${model.cycles})`);
  };

  // Input progress: packets started / ended (by handshake), for the command timing.
  let inBeats = 0;
  let started = 0;
  let ended = 0;
  let midPacket = false;
  const endedAt: number[] = [];
  let firstInputEdge = -1;
  // Commands.
  let nextCmd = 0;
  let offering = false;
  const mayOffer = (i: number): boolean => {
    const p = packets[i]!;
    if (p.when === 'early') return true;
    if (p.when === 'during') return started > i;
    return ended > i && model.cycles >= endedAt[i]! + p.delay;
  };
  // Writes: attributed in order to the placed (not discarded) packets.
  const placed = packets.filter((p) => !p.discard);
  const expectedWriteBeats = placed.reduce((n, p) => n + blocks(p, W), 0);
  let wp = 0;
  let wpBeats = 0;
  let writeBeats = 0;
  let lastWriteEdge = -1;
  const mem = new Map<bigint, Uint8Array>();
  let held: string | null = null;
  let idleSeen = 0;
  let fifoFull = 0;
  // Per accepted command: finished when its writes are in (placed) or its beats are in (discard: a lower bound).
  let accepted = 0;

  tb.add({
    drive() {
      if (!offering && nextCmd < packets.length && !cmdPause.next() && mayOffer(nextCmd)) {
        const p = packets[nextCmd]!;
        model.poke(P.cmdAddr, p.addr);
        model.pokeNumber(P.cmdDiscard, p.discard ? 1 : 0);
        offering = true;
      }
      model.pokeNumber(P.cmdValid, offering ? 1 : 0);
      model.pokeNumber(P.wrReady, wrPause.next() ? 0 : 1);
    },
    sample() {
      const edge = model.cycles - 1;
      // idle, against the state before this edge's handshakes.
      const idle = model.peekPreNumber(P.idle) === 1;
      if (idle) {
        idleSeen++;
        // Placed commands accepted: those among the first `accepted` packets; writes still due?
        const placedAccepted = placedBefore[accepted]!;
        const dueBeats = placedAccepted > 0 ? cumBlocks[placedAccepted - 1]! : 0;
        if (writeBeats < dueBeats) report(`idle = 1 with ${dueBeats - writeBeats} write beats of accepted commands outstanding`);
        if (ended < accepted) report(`idle = 1 while packet ${ended} of an accepted command has not fully arrived`);
      }
      if (model.peekPreNumber(P.inValid) === 1 && model.peekPreNumber(P.inReady) === 0) fifoFull++;
      if (model.peekPreNumber(P.inValid) === 1 && model.peekPreNumber(P.inReady) === 1) {
        if (firstInputEdge < 0) firstInputEdge = edge;
        inBeats++;
        if (!midPacket) started++;
        midPacket = model.peekPreNumber(P.inLast) !== 1;
        if (!midPacket) endedAt[ended++] = model.cycles;
      }
      if (offering && model.peekPreNumber(P.cmdReady) === 1) {
        offering = false;
        nextCmd++;
        accepted++;
      }
      const wv = model.peekPreNumber(P.wrValid) === 1;
      const wr = model.peekPreNumber(P.wrReady) === 1;
      if (held !== null) {
        const now = wv ? `${model.peekPre(P.wrAddr)}/${model.peekPre(P.wrStrb)}/${model.peekPre(P.wrData)}` : null;
        if (now !== held) report('wr_* changed or dropped while wr_ready was low');
      }
      held = wv && !wr ? `${model.peekPre(P.wrAddr)}/${model.peekPre(P.wrStrb)}/${model.peekPre(P.wrData)}` : null;
      if (!wv || !wr) return;
      lastWriteEdge = edge;
      writeBeats++;
      const addr = model.peekPre(P.wrAddr);
      const strb = model.peekPre(P.wrStrb);
      const data = model.peekPreBytes(P.wrData);
      if (addr % BW !== 0n) report(`write at ${addr.toString(16)}, not a multiple of ${W}`);
      if (strb === 0n) report(`write at ${addr.toString(16)} with wr_strb = 0`);
      const p = placed[wp];
      const lo = p ? p.addr : 0n;
      const hi = p ? p.addr + BigInt(p.data.length) : 0n;
      const base = addr - (addr % BW);
      let word = mem.get(base);
      if (!word) mem.set(base, (word = new Uint8Array(W)));
      for (let j = 0; j < W; j++) {
        if (((strb >> BigInt(j)) & 1n) === 0n) continue;
        const a = base + BigInt(j);
        if (a < lo || a >= hi) {
          outside++;
          report(`octet at ${a.toString(16)} outside packet ${p ? packets.indexOf(p) : 'none'} [${lo.toString(16)}, ${hi.toString(16)})`);
        }
        word[j] = data[j]!;
      }
      if (p && ++wpBeats === blocks(p, W)) {
        wp++;
        wpBeats = 0;
      }
    },
  });
  // placedBefore[i]: placed packets among the first i; cumBlocks[k]: write beats of the first k + 1 placed.
  const placedBefore = [0];
  for (const p of packets) placedBefore.push(placedBefore[placedBefore.length - 1]! + (p.discard ? 0 : 1));
  const cumBlocks: number[] = [];
  placed.forEach((p, k) => cumBlocks.push((k ? cumBlocks[k - 1]! : 0) + blocks(p, W)));

  const totalBeats = packets.reduce((n, p) => n + Math.ceil(p.data.length / W), 0);
  for (const p of [P.cmdValid, P.wrReady]) model.pokeNumber(p, 0);
  tb.reset();
  try {
    tb.until(() => nextCmd === packets.length && ended === packets.length && writeBeats >= expectedWriteBeats, 20 * totalBeats + 10_000, `${packets.length} packets through ${name}`);
    tb.until(() => model.peekNumber(P.idle) === 1, 200, `${name} idle at the end`);
  } catch (e) {
    report((e as Error).message);
  }
  tb.run(30); // anything extra shows up below
  if (model.peekNumber(P.idle) !== 1) report('idle = 0 at the end');
  if (writeBeats !== expectedWriteBeats) report(`${writeBeats} write beats, expected ${expectedWriteBeats}`);
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
  for (const k of new Set([...want.keys(), ...mem.keys()])) {
    const a = want.get(k) ?? new Uint8Array(W);
    const b = mem.get(k) ?? new Uint8Array(W);
    for (let j = 0; j < W; j++) if (a[j] !== b[j]) memoryMismatches++;
  }
  return {
    module: name,
    width: W,
    packets: packets.length,
    placed: placed.length,
    octets: packets.reduce((n, p) => n + p.data.length, 0),
    inputBeats: inBeats,
    writeBeats,
    expectedWriteBeats,
    memoryMismatches,
    violations: nViolations,
    outside,
    firstViolations: violations,
    cycles: lastWriteEdge - firstInputEdge + 1,
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
