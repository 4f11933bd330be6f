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
