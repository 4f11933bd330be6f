import { hex } from '../../ts-model/util/hex';
import type { WriteBeat } from '../harness/write-port';

/**
 * What the top-level scoreboards (random mode, sim/cosim/rnic.ts; scenario mode,
 * sim/cosim/rnic-scenario.ts) report, and the one memory comparison both use.
 */

/** The RTL write beat that last set an octet. */
export interface WriteRecord {
  readonly cycle: number;
  /** The beat's W-aligned address and strobe, as hex. */
  readonly addr: string;
  readonly strb: string;
}

export interface RnicMismatch {
  readonly qp: number;
  /** The connection on that QP (1 for a scenario). */
  readonly stream: number;
  /** The operation of the stream the difference came up in (-1 when there is none). */
  readonly op: number;
  /**
   * The cycle of the first divergence: when the RTL sent the differing FPDU, raised the differing
   * completion, or wrote the wrong octet; for something the RTL never did, the cycle it was found
   * missing by.
   */
  readonly cycle: number;
  readonly what: string;
  readonly expected: string;
  readonly actual: string;
  /** Decoded, side by side, when the difference is in a packet. */
  readonly sideBySide?: string;
  /** A memory difference: the write that put the wrong octet there (none: the RTL never wrote it). */
  readonly write?: WriteRecord | null;
}

/** What the top-level co-simulations (random and scenario) report alike. */
export interface TopRunResult {
  readonly dut: 'rnic';
  readonly module: string;
  readonly seed: number;
  readonly ops: number;
  /** FPDUs on the wire, both directions. */
  readonly packets: number;
  readonly fpdusIn: number;
  readonly fpdusOut: number;
  readonly workRequests: number;
  readonly events: number;
  readonly mismatches: number;
  readonly violations: number;
  readonly firstMismatch: RnicMismatch | null;
  readonly firstViolation: string | null;
  readonly cycles: number;
  readonly simCyclesPerSecond: number;
  /** Files written for the first mismatch (pcaps), if any. */
  readonly evidence: string[];
}

export interface Span {
  readonly addr: bigint;
  readonly len: number;
}

export interface MemoryDifference {
  /** The first octet that differs. */
  readonly addr: bigint;
  readonly expected: string;
  readonly actual: string;
  readonly write: WriteRecord | null;
}

/** Octets shown on each side of a memory difference. */
const SHOWN = 16;

/**
 * The first octet in `spans` (in order) where the RTL's host memory differs from the model's, with
 * the write beat that last set it. Compared in every mode: every span the model placed in, every
 * receive buffer and every STag region.
 */
export function firstMemoryDifference(
  spans: readonly Span[],
  model: (addr: bigint, len: number) => Uint8Array,
  rtl: (addr: bigint, len: number) => Uint8Array,
  writes: readonly WriteBeat[],
  width: number,
): MemoryDifference | null {
  for (const g of spans) {
    if (g.len === 0) continue;
    const want = model(g.addr, g.len);
    const have = rtl(g.addr, g.len);
    if (Buffer.compare(want, have) === 0) continue;
    let k = 0;
    while (want[k] === have[k]) k++;
    const addr = g.addr + BigInt(k);
    return { addr, expected: hex(want.subarray(k, k + SHOWN)), actual: hex(have.subarray(k, k + SHOWN)), write: lastWriteOf(addr, writes, width) };
  }
  return null;
}

/** The last logged write beat whose strobe covers `addr`. */
export function lastWriteOf(addr: bigint, writes: readonly WriteBeat[], width: number): WriteRecord | null {
  const W = BigInt(width);
  const base = addr - (addr % W);
  const lane = addr - base;
  for (let i = writes.length - 1; i >= 0; i--) {
    const w = writes[i]!;
    if (w.addr === base && (w.strb >> lane) & 1n) return { cycle: w.cycle, addr: `0x${w.addr.toString(16)}`, strb: `0x${w.strb.toString(16)}` };
  }
  return null;
}

/** A memory difference as a mismatch's fields. */
export function memoryMismatch(d: MemoryDifference, what: string, foundAt: number): Pick<RnicMismatch, 'what' | 'expected' | 'actual' | 'cycle' | 'write'> {
  return { what: `${what} at 0x${d.addr.toString(16)}`, expected: d.expected, actual: d.actual, cycle: d.write?.cycle ?? foundAt, write: d.write };
}

/** One line for a mismatch's place: QP, connection, operation and cycle. */
export function mismatchPlace(m: RnicMismatch): string {
  return `QP ${m.qp}, connection ${m.stream}${m.op >= 0 ? `, operation ${m.op}` : ''}, cycle ${m.cycle}`;
}

/** The write behind a memory difference, for the text report. */
export function writeLine(m: RnicMismatch): string | null {
  if (m.write === undefined) return null;
  return m.write ? `  written by the RTL at cycle ${m.write.cycle}: beat address ${m.write.addr}, strobe ${m.write.strb}` : '  the RTL never wrote this octet';
}

/** Octets lo..hi (inclusive) of one QP's memory that the RTL wrote in one beat, at the cycle of its handshake. */
export interface WrittenSpan {
  readonly lo: bigint;
  readonly hi: bigint;
  readonly cycle: number;
}

/** Data a completion came ahead of: its first such octet, and the cycle of the last write into it. */
export interface EarlyCompletion {
  readonly addr: bigint;
  readonly lastWrite: number;
}

/**
 * Completion order (RFC 5041 §5.3–5.4: a message is delivered only once all its segments and every
 * earlier message are placed; RFC 5040 §5.5 rule 4: a Send fences the Writes before it;
 * spec/ddp-rdmap.md §6): whether every octet of `spans` (what the model placed before a
 * completion) was written by one of `writes` (the RTL's of the same step) at a cycle no later than
 * `cycle`, the completion's handshake on m_cq. A beat lands in host memory at its handshake
 * (write-port.ts) and the host acts on a completion from the edge it takes it, so a write at that
 * same edge is already in memory: `<=`. An octet the RTL wrote only later is returned (the first,
 * with the cycle of the latest write into that data); one it never wrote is the memory
 * comparison's to report, not this one's. Later writes over octets written in time (a later
 * message of the step into the same place) are no fault.
 */
export function completionBeforeData(spans: readonly Span[], writes: readonly WrittenSpan[], cycle: number): EarlyCompletion | null {
  let found: EarlyCompletion | null = null;
  for (const g of spans) {
    const end = g.addr + BigInt(g.len); // exclusive
    const overlapping = writes.filter((w) => w.hi >= g.addr && w.lo < end);
    const inTime = overlapping.filter((w) => w.cycle <= cycle).sort((x, y) => (x.lo < y.lo ? -1 : x.lo > y.lo ? 1 : 0));
    const late = overlapping.filter((w) => w.cycle > cycle);
    if (!late.length) continue;
    // The octets of the span no write in time covers: [at, gapEnd) runs, in address order.
    let at = g.addr;
    const gaps: [bigint, bigint][] = [];
    for (const w of inTime) {
      if (w.lo > at) gaps.push([at, w.lo < end ? w.lo : end]);
      if (w.hi + 1n > at) at = w.hi + 1n;
      if (at >= end) break;
    }
    if (at < end) gaps.push([at, end]);
    for (const [lo, hi] of gaps) {
      const into = late.filter((w) => w.hi >= lo && w.lo < hi);
      if (!into.length) continue;
      // The first late octet of the gap, and the latest write into it.
      const addr = into.reduce((a, w) => (w.lo <= lo ? lo : w.lo < a ? w.lo : a), hi);
      const lastWrite = Math.max(...into.map((w) => w.cycle));
      found = found ? { addr: found.addr < addr ? found.addr : addr, lastWrite: Math.max(found.lastWrite, lastWrite) } : { addr, lastWrite };
    }
  }
  return found;
}
