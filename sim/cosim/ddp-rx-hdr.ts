import { DDP_RX_CAPTURE, DDP_RX_DESC, errBits } from '../../hdl-gen/blocks/ddp-rx-hdr';
import { UNTAGGED_HEADER_SIZE } from '../../ts-model/ddp/constants';
import { encodeDdpSegment, headerSize, type DdpHeader } from '../../ts-model/ddp/header';
import {
  IMMEDIATE_DATA_SIZE,
  Opcode,
  READ_REQUEST_HEADER_SIZE,
  isTaggedOpcode,
  rdmapControl,
} from '../../ts-model/rdmap/constants';
import { encodeAtomicRequest, encodeAtomicResponse, encodeReadRequest, encodeTerminate } from '../../ts-model/rdmap/headers';
import { checkHeader } from '../../ts-model/rnic/header-checks';
import { DEFAULT_RDMAP_OPTIONS } from '../../ts-model/rnic/options';
import type { Prng } from '../../ts-model/util/prng';
import type { AxisSendBeat } from '../cocotb/axis';
import type { NativeAxisSink } from '../cocotb/native-axis-sink';
import type { NativeAxisSource } from '../cocotb/native-axis-source';
import { DutBench } from '../harness/dut-bench';
import { dutSelection, type DutSelection } from '../harness/open-dut';
import { Tally } from '../harness/tally';
import { hex } from '../../ts-model/util/hex';

/**
 * Co-simulation of ddp_rx_hdr_w<W> (hdl-gen/blocks/ddp-rx-hdr.ts) against the model's
 * checkHeader (ts-model/rnic/header-checks.ts): random ULPDUs from the model's encoders over all
 * opcodes 0x0–0xF, tagged and untagged, with reserved bits and the L bit random, and faults aimed
 * at every outcome of H1–H7; random back-pressure on the input, the payload and the descriptor.
 *
 * Every descriptor is compared field by field (verdict, lengths, the decoded header wherever the
 * model decoded one, the opcode wherever the model has one, the 52 captured RDMAP octets), every
 * payload packet octet for octet with `segment.payload`, and for the opcodes without data the
 * descriptor's RDMAP octets with `segment.payload`. Every m_axis beat must start at lane 0 (tkeep
 * all ones but on tlast, 2^k − 1 there).
 */
export interface DdpRxHdrCosimOptions extends DutSelection {
  readonly width: number;
  readonly seed: number;
  readonly ulpdus: number;
  /** cfg_rfc7306 and the model's option (default on). */
  readonly rfc7306?: boolean;
  /** Share of ULPDUs with an aimed fault (default 0.5). */
  readonly faultRate?: number;
  readonly sourcePause?: number;
  readonly sinkPause?: number;
  readonly descPause?: number;
  /** Every ULPDU a valid one of this opcode and ULPDU length (throughput runs). */
  readonly fixed?: { readonly opcode: number; readonly length: number };
}

export interface DdpRxHdrMismatch {
  readonly ulpdu: number;
  /**
   * The cycle of the difference: when the differing descriptor, payload packet or beat came out;
   * for something the RTL never did, the cycle it was found missing by.
   */
  readonly cycle: number;
  readonly field: string;
  readonly expected: string;
  readonly actual: string;
  readonly input: string;
}

/** The outcomes of checkHeader, by check. */
export const DDP_RX_OUTCOMES = ['ok', 'H1', 'H2 tagged', 'H2 untagged', 'H3', 'H4', 'H4 extension', 'H5', 'H6', 'H7 short', 'H7 long'] as const;
export type DdpRxOutcome = (typeof DDP_RX_OUTCOMES)[number];

export interface DdpRxHdrCosimResult {
  readonly dut: 'ddp_rx_hdr';
  readonly module: string;
  readonly width: number;
  readonly seed: number;
  readonly ulpdus: number;
  readonly rfc7306: boolean;
  readonly mismatches: number;
  readonly firstMismatch?: DdpRxHdrMismatch;
  readonly coverage: {
    /** ULPDUs per checkHeader outcome. */
    readonly outcomes: Record<DdpRxOutcome, number>;
    /** ULPDUs per error code name ('ok' for none). */
    readonly errors: Record<string, number>;
    /** ULPDUs per opcode (where the model decoded one), passing and failing. */
    readonly opcodes: Record<number, number>;
    /** Passing ULPDUs per opcode. */
    readonly okOpcodes: Record<number, number>;
    readonly payloadPackets: number;
    /** Passing data-carrying ULPDUs with no data (no m_axis packet). */
    readonly emptyData: number;
  };
  /** Cycles from reset to the last descriptor. */
  readonly cycles: number;
  readonly inputBeats: number;
  /** Mean cycles between descriptors from the second ULPDU on (steady state with no back-pressure). */
  readonly cyclesPerUlpdu: number;
  readonly beatsPerUlpdu: number;
  readonly rtl: string;
}

const DATA_OPCODES: ReadonlySet<number> = new Set([Opcode.WRITE, Opcode.READ_RESPONSE, Opcode.SEND, Opcode.SEND_INVALIDATE, Opcode.SEND_SE, Opcode.SEND_SE_INVALIDATE]);

type Fault = 'none' | 'short' | 'dv' | 'rv' | 'undefined-opcode' | 'extension' | 't-bit' | 'fixed-short' | 'term-short' | 'too-long' | 'ctrl-random' | 'truncate';
const FAULTS: readonly Fault[] = ['short', 'dv', 'rv', 'undefined-opcode', 'extension', 't-bit', 'fixed-short', 'term-short', 'too-long', 'ctrl-random', 'truncate'];


function dataLength(r: Prng, W: number): number {
  if (r.bool(0.03)) return r.int(1000, 2000);
  return r.pick([0, 1, 2, r.int(0, W), r.int(0, 3 * W), r.int(0, 3 * W), r.int(0, 200)]);
}

function rdmapPart(r: Prng, op: number, W: number, term?: { d: boolean; r: boolean }): Uint8Array {
  switch (op) {
    case Opcode.READ_REQUEST:
      return encodeReadRequest({ sinkStag: r.u32(), sinkTo: r.u64(), size: r.u32(), srcStag: r.u32(), srcTo: r.u64() });
    case Opcode.TERMINATE: {
      const d = term?.d ?? r.bool();
      const rr = term?.r ?? r.bool();
      const copy = r.bytes(r.bool() ? 14 : 18);
      copy[0] = (copy.length === 14 ? 0x80 : 0) | (copy[0]! & 0x7f);
      return encodeTerminate({
        layer: r.int(0, 15), etype: r.int(0, 15), code: r.int(0, 255), m: r.bool(), d, r: rr,
        segmentLength: r.int(0, 0xffff), ddpHeader: d ? copy : null, rdmaHeader: rr ? r.bytes(READ_REQUEST_HEADER_SIZE) : null,
      });
    }
    case Opcode.IMMEDIATE:
    case Opcode.IMMEDIATE_SE:
      return r.bytes(IMMEDIATE_DATA_SIZE);
    case Opcode.ATOMIC_REQUEST:
      return encodeAtomicRequest({ aopcode: r.pick([0, 1, 2]), requestId: r.u32(), stag: r.u32(), to: r.u64(), addSwapData: r.u64(), addSwapMask: r.u64(), compareData: r.u64(), compareMask: r.u64() });
    case Opcode.ATOMIC_RESPONSE:
      return encodeAtomicResponse({ requestId: r.u32(), value: r.u64() });
    default:
      return r.bytes(dataLength(r, W));
  }
}

/** A ULPDU of `op` built by the model's encoders, reserved bits and L random. */
function wellFormed(r: Prng, op: number, W: number, body?: Uint8Array): Uint8Array {
  const tagged = isTaggedOpcode(op);
  const rsvdUlp = rdmapControl(op) | (r.bool(0.2) ? r.int(0, 3) << 4 : 0);
  const last = r.bool();
  const h: DdpHeader = tagged
    ? { tagged, last, dv: 1, rsvdUlp, stag: r.u32(), to: r.u64() }
    : { tagged, last, dv: 1, rsvdUlp, rsvdUlp2: r.u32(), qn: r.bool() ? r.int(0, 3) : r.u32(), msn: r.u32(), mo: r.u32() };
  const out = encodeDdpSegment(h, body ?? rdmapPart(r, op, W));
  if (r.bool(0.2)) out[0] = out[0]! | (r.int(0, 15) << 2); // DDP reserved bits: ignored on receipt
  return out;
}

function makeUlpdu(r: Prng, W: number, faultRate: number): Uint8Array {
  const fault: Fault = r.bool(faultRate) ? r.pick(FAULTS) : 'none';
  const anyOp = () => r.int(0, Opcode.ATOMIC_RESPONSE);
  switch (fault) {
    case 'none':
      return wellFormed(r, anyOp(), W);
    case 'short': {
      const u = wellFormed(r, anyOp(), W);
      return u.slice(0, r.int(0, headerSize((u[0]! & 0x80) !== 0) - 1));
    }
    case 'dv': {
      const u = wellFormed(r, anyOp(), W);
      u[0] = (u[0]! & ~3) | r.pick([0, 2, 3]);
      return u;
    }
    case 'rv': {
      const u = wellFormed(r, anyOp(), W);
      u[1] = (u[1]! & 0x3f) | (r.pick([0, 2, 3]) << 6);
      return u;
    }
    case 'undefined-opcode': {
      const u = wellFormed(r, anyOp(), W);
      u[1] = (u[1]! & 0xf0) | r.int(0xc, 0xf);
      if (r.bool(0.5)) u[0] = u[0]! ^ 0x80;
      return u;
    }
    case 'extension':
      return wellFormed(r, r.int(Opcode.IMMEDIATE, Opcode.ATOMIC_RESPONSE), W);
    case 't-bit': {
      const u = wellFormed(r, anyOp(), W);
      u[0] = u[0]! ^ 0x80;
      return u;
    }
    case 'fixed-short': {
      const op = r.pick([Opcode.READ_REQUEST, Opcode.TERMINATE, Opcode.IMMEDIATE, Opcode.IMMEDIATE_SE, Opcode.ATOMIC_REQUEST, Opcode.ATOMIC_RESPONSE]);
      const u = wellFormed(r, op, W);
      return u.slice(0, r.int(UNTAGGED_HEADER_SIZE, Math.min(u.length, UNTAGGED_HEADER_SIZE + (op === Opcode.TERMINATE ? 4 : 52)) - 1));
    }
    case 'term-short': {
      const d = r.bool();
      const u = wellFormed(r, Opcode.TERMINATE, W, rdmapPart(r, Opcode.TERMINATE, W, { d, r: !d || r.bool() }));
      return u.slice(0, r.int(UNTAGGED_HEADER_SIZE + 4, u.length - 1));
    }
    case 'too-long': {
      const op = r.pick([Opcode.READ_REQUEST, Opcode.TERMINATE, Opcode.IMMEDIATE, Opcode.IMMEDIATE_SE, Opcode.ATOMIC_REQUEST, Opcode.ATOMIC_RESPONSE]);
      const u = wellFormed(r, op, W);
      // Small excesses, and one of every power of two up to 4 KiB: each bit of the length compare
      // decides once (a stuck bit of rdmap_len above the first beats went unseen).
      const extra = r.bytes(r.pick([1, r.int(1, 8), r.int(1, 3 * W), 1 << r.int(0, 12)]));
      const out = new Uint8Array(u.length + extra.length);
      out.set(u);
      out.set(extra, u.length);
      return out;
    }
    case 'ctrl-random': {
      const u = wellFormed(r, anyOp(), W);
      u[0] = r.int(0, 255);
      u[1] = r.int(0, 255);
      return u;
    }
    case 'truncate': {
      const u = wellFormed(r, anyOp(), W);
      return u.slice(0, r.int(0, u.length));
    }
  }
}

function outcomeOf(c: ReturnType<typeof checkHeader>): DdpRxOutcome {
  if (c.ok) return 'ok';
  const why = c.reason;
  if (why.includes('shorter than the DDP header')) return 'H1';
  if (why.startsWith('DDP version')) return c.header!.tagged ? 'H2 tagged' : 'H2 untagged';
  if (why.startsWith('RDMAP version')) return 'H3';
  if (why.includes('with T =')) return 'H5';
  if (why.startsWith('opcode')) return c.opcode! > Opcode.ATOMIC_RESPONSE ? 'H4' : 'H4 extension';
  if (why.startsWith('Terminate of')) return 'H7 short';
  if (why.includes('shorter than the')) return 'H6';
  return 'H7 long';
}

/** A field of the descriptor record. */
type DescField = (typeof DDP_RX_DESC.fields)[number]['name'] & keyof ReturnType<typeof DDP_RX_DESC.decode>;

/**
 * The fixture of ddp_rx_hdr_w<W>: ULPDUs into s_axis; payload packets out of m_axis (every beat
 * kept, to check its lane-0 alignment) and descriptors out of m_desc (one beat each, with its
 * cycle), each with back-pressure. All three are native channels (sim/verilator/channel.ts), so
 * the run goes in native batches.
 */
class DdpRxHdrBench extends DutBench {
  readonly sAxis: NativeAxisSource;
  readonly mAxis: NativeAxisSink;
  readonly mDesc: NativeAxisSink;

  constructor(opts: DdpRxHdrCosimOptions, rfc7306: boolean) {
    super(...DutBench.opening(`ddp_rx_hdr_w${opts.width}`, opts.seed, dutSelection(opts)));
    this.sAxis = this.source('s_axis', { pause: this.pause(opts.sourcePause ?? 0.2), native: true });
    this.mAxis = this.sink('m_axis', { pause: this.pause(opts.sinkPause ?? 0.2), native: true, beats: true });
    this.mDesc = this.sink('m_desc', { pause: this.pause(opts.descPause ?? 0.2), native: true });
    this.inputs('cfg').poke({ rfc7306 });
  }
}

export function cosimDdpRxHdr(opts: DdpRxHdrCosimOptions): DdpRxHdrCosimResult {
  const W = opts.width;
  const name = `ddp_rx_hdr_w${W}`;
  const rfc7306 = opts.rfc7306 ?? true;
  const options = { ...DEFAULT_RDMAP_OPTIONS, rfc7306 };
  const tb = new DdpRxHdrBench(opts, rfc7306);
  const { model, r, sAxis: source, mAxis: sink, mDesc: descs } = tb;

  const ulpdus: Uint8Array[] = [];
  let inputBeats = 0;
  for (let i = 0; i < opts.ulpdus; i++) {
    const u = opts.fixed
      ? wellFormed(r, opts.fixed.opcode, W, r.bytes(opts.fixed.length - headerSize(isTaggedOpcode(opts.fixed.opcode))))
      : makeUlpdu(r, W, opts.faultRate ?? 0.5);
    ulpdus.push(u);
    const beats: AxisSendBeat[] = [];
    for (let at = 0; at < u.length || beats.length === 0; at += W) {
      const k = Math.max(0, Math.min(W, u.length - at));
      beats.push({ data: u.subarray(at, at + k), tkeep: (1n << BigInt(k)) - 1n, tlast: at + W >= u.length });
    }
    inputBeats += beats.length;
    source.sendBeats(beats);
  }
  const checks = ulpdus.map((u) => checkHeader(u, options));
  const hasData = checks.map((c) => c.ok && DATA_OPCODES.has(c.segment.opcode) && c.segment.payload.length > 0);
  const packets = hasData.filter(Boolean).length;

  tb.reset();
  const c0 = model.cycles;
  const mismatches = new Tally<DdpRxHdrMismatch>(1);
  const miss = (i: number, fieldName: string, expected: unknown, actual: unknown, cycle = model.cycles) => {
    const u = ulpdus[i];
    mismatches.add({ ulpdu: i, cycle, field: fieldName, expected: String(expected), actual: String(actual), input: u ? hex(u.subarray(0, 96)) + (u.length > 96 ? '…' : '') : '' });
  };
  try {
    // Two native stops in turn: counts only grow, so the second stops in the first cycle both hold.
    const maxCycles = inputBeats * 10 + 10_000;
    const what = `${opts.ulpdus} descriptors and ${packets} payload packets from ${name}`;
    const first = tb.until(descs.received(opts.ulpdus), maxCycles, what);
    tb.until(sink.received(packets), maxCycles - first, what);
  } catch (e) {
    miss(-1, 'progress', `${opts.ulpdus} descriptors, ${packets} packets`, `${descs.available} descriptors, ${sink.available} packets: ${(e as Error).message}`);
  }
  const cycles = model.cycles - c0;
  tb.run(20); // anything extra shows up as a surplus below
  // The channels' logs live in the addon: read them before it closes.
  const frames = descs.drain();
  const payloads = sink.drain();
  tb.close();

  const outcomes = Object.fromEntries(DDP_RX_OUTCOMES.map((o) => [o, 0])) as Record<DdpRxOutcome, number>;
  const errors: Record<string, number> = {};
  const opcodes: Record<number, number> = {};
  const okOpcodes: Record<number, number> = {};
  let emptyData = 0;
  // m_desc has no tlast: every beat is a descriptor, its frame's cycle the handshake's.
  const descAt = frames.map((f) => f.cycle!);
  if (frames.length !== opts.ulpdus) miss(-1, 'descriptor count', opts.ulpdus, frames.length);
  if (payloads.length !== packets) miss(-1, 'payload packet count', packets, payloads.length);
  let p = 0;
  checks.forEach((c, i) => {
    const u = ulpdus[i]!;
    outcomes[outcomeOf(c)]++;
    const errName = c.ok ? 'ok' : c.error.name;
    errors[errName] = (errors[errName] ?? 0) + 1;
    const op = c.ok ? c.segment.opcode : c.opcode;
    if (op !== null) opcodes[op] = (opcodes[op] ?? 0) + 1;
    if (c.ok) okOpcodes[op!] = (okOpcodes[op!] ?? 0) + 1;
    if (c.ok && DATA_OPCODES.has(c.segment.opcode) && c.segment.payload.length === 0) emptyData++;
    const f = frames[i];
    if (!f) return;
    const d = f.data.reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n);
    const want: [DescField, bigint][] = [
      ['ok', c.ok ? 1n : 0n],
      ['err', c.ok ? 0n : errBits(c.error)],
      ['ulpdu_len', BigInt(u.length & 0xffff)],
      ['has_payload', hasData[i] ? 1n : 0n],
      ['payload_len', hasData[i] ? BigInt((c.ok && c.segment.payload.length) || 0) : 0n],
    ];
    const h = c.ok ? c.segment.header : c.header;
    if (h) {
      want.push(['t', h.tagged ? 1n : 0n], ['l', h.last ? 1n : 0n], ['dv', BigInt(h.dv)], ['rsvd_ulp', BigInt(h.rsvdUlp)], ['ctrl0', BigInt(u[0]!)]);
      if (h.tagged) want.push(['stag', BigInt(h.stag)], ['to', h.to]);
      else want.push(['stag', BigInt(h.rsvdUlp2)], ['qn', BigInt(h.qn)], ['msn', BigInt(h.msn)], ['mo', BigInt(h.mo)]);
    }
    if (op !== null) want.push(['opcode', BigInt(op)]);
    const capture = new Uint8Array(DDP_RX_CAPTURE - UNTAGGED_HEADER_SIZE);
    capture.set(u.subarray(UNTAGGED_HEADER_SIZE, DDP_RX_CAPTURE));
    want.push(['rdmap', capture.reduceRight((acc, b) => (acc << 8n) | BigInt(b), 0n)]);
    const got = DDP_RX_DESC.decode(d);
    for (const [k, v] of want) {
      if (got[k] !== v) miss(i, k, `0x${v.toString(16)}`, `0x${got[k].toString(16)}`, f.cycle);
    }
    // The model's payload of an opcode without data: the RDMAP part, whole in the descriptor.
    if (c.ok && !DATA_OPCODES.has(c.segment.opcode) && Buffer.compare(capture.subarray(0, c.segment.payload.length), c.segment.payload) !== 0) {
      miss(i, 'rdmap part', hex(c.segment.payload), hex(capture.subarray(0, c.segment.payload.length)), f.cycle);
    }
    if (hasData[i] && c.ok) {
      const got = payloads[p++];
      if (got && Buffer.compare(got.data, c.segment.payload) !== 0) miss(i, 'payload', hex(c.segment.payload), hex(got.data), got.cycle);
    }
  });
  // Realigned to lane 0: full beats, and 2^k − 1 (k ≥ 1) on tlast.
  const full = (1n << BigInt(W)) - 1n;
  sink.beats.forEach((b, j) => {
    const okKeep = b.tlast ? b.tkeep !== 0n && (b.tkeep & (b.tkeep + 1n)) === 0n : b.tkeep === full;
    // Beats count edges from 0 (as AxisMonitor does); the model's cycle count includes the edge.
    if (!okKeep) miss(-1, `m_axis beat ${j} tkeep`, b.tlast ? '2^k - 1' : 'all ones', `0x${b.tkeep.toString(16)} tlast ${b.tlast}`, b.cycle + 1);
  });
  const gaps = descAt.slice(1).map((t, j) => t - descAt[j]!);
  return {
    dut: 'ddp_rx_hdr',
    module: name,
    width: W,
    seed: opts.seed,
    ulpdus: opts.ulpdus,
    rfc7306,
    mismatches: mismatches.count,
    ...(mismatches.first && { firstMismatch: mismatches.first }),
    coverage: { outcomes, errors, opcodes, okOpcodes, payloadPackets: packets, emptyData },
    cycles,
    inputBeats,
    cyclesPerUlpdu: gaps.length ? gaps.reduce((a, b) => a + b, 0) / gaps.length : NaN,
    beatsPerUlpdu: inputBeats / opts.ulpdus,
    rtl: tb.origin,
  };
}
