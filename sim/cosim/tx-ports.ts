import { hex } from '../../ts-model/util/hex';
import type { Component } from '../cocotb/component';
import type { PortHandle, SimModel } from '../verilator/model';

/**
 * The ULPDU stream every transmit block (rdmap_tx_resp_w<W>, ddp_tx_w<W>) sends on m_axis, with
 * its protocol check, and the comparison of its packets with the model's ULPDUs. `cycle()` is the
 * testbench's cycle count; `report` collects violations.
 */

export interface PortCheckContext {
  readonly model: SimModel;
  readonly width: number;
  readonly cycle: () => number;
  readonly report: (violation: string) => void;
}

const hasBit = (words: Uint32Array, offset: number, k: number): boolean => ((words[offset + (k >>> 5)]! >>> (k & 31)) & 1) === 1;

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
  /** The cycle the differing ULPDU's last beat came out; for one the RTL never sent, the end of the run. */
  readonly cycle: number;
  readonly expected: string;
  readonly actual: string;
}

const show = (u: Uint8Array | undefined): string => (u ? `${u.length} octets ${hex(u.subarray(0, 48))}${u.length > 48 ? '…' : ''}` : 'none');

/**
 * One mismatch per position where the ULPDUs differ (or one side has none), in order; `at` holds
 * the cycle each actual ULPDU came out, `end` the run's last.
 */
export function ulpduMismatches(expected: readonly Uint8Array[], actual: readonly Uint8Array[], at: readonly number[], end: number): UlpduMismatch[] {
  const out: UlpduMismatch[] = [];
  for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
    const e = expected[i];
    const a = actual[i];
    if (!e || !a || Buffer.compare(e, a) !== 0) out.push({ what: 'ULPDU', index: i, cycle: at[i] ?? end, expected: show(e), actual: show(a) });
  }
  return out;
}

/** The mismatches a transmit run's violations, idle flag and ULPDUs make, in that order. */
export function txMismatches(
  run: { readonly violations: readonly string[]; readonly violationAt: readonly number[]; readonly idleAtEnd: boolean; readonly ulpdus: readonly Uint8Array[]; readonly ulpduAt: readonly number[]; readonly endCycle: number },
  expected: readonly Uint8Array[],
  more: readonly Omit<UlpduMismatch, 'cycle'>[] = [],
): UlpduMismatch[] {
  const end = run.endCycle;
  const out: UlpduMismatch[] = run.violations.map((v, i) => ({ what: 'protocol', index: -1, cycle: run.violationAt[i] ?? end, expected: 'no violation', actual: v }));
  if (!run.idleAtEnd) out.push({ what: 'idle', index: -1, cycle: end, expected: '1 at the end', actual: '0' });
  out.push(...more.map((m) => ({ ...m, cycle: end })));
  out.push(...ulpduMismatches(expected, run.ulpdus, run.ulpduAt, end));
  return out;
}
