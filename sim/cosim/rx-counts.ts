import { ALL_ERROR_CODES, formatErrorCode, type ErrorCode } from '../../ts-model/terminate-codes';
import { Tally } from '../harness/tally';

/** The receive-path error codes of spec/ddp-rdmap.md §9 (DDP and RDMAP), plus LLP 0x03 (H1/H6, or MPA's marker check) and 0x02 (MPA's CRC verdict). */
export const RX_ERROR_CODES: readonly ErrorCode[] = ALL_ERROR_CODES.filter((e) => e.layer !== 2 || e.code === 0x02 || e.code === 0x03);

/**
 * What the receive-path co-simulations (the receive path, sim/cosim/rx.ts; the whole datapath,
 * rnic.ts) count as they go: differences and protection violations (the first 20 kept), the error
 * codes raised, opcodes seen and other coverage; and the result fields they make.
 */
export class RxCounts<M> {
  readonly mismatches = new Tally<M>();
  readonly violations = new Tally<string>();
  readonly errorsHit: Record<string, number> = {};
  readonly opcodes: Record<string, number> = {};
  readonly coverage: Record<string, number> = {};
  /** Tagged payload octets the peer sent, and events compared one by one. */
  payloadBytes = 0;
  events = 0;

  cov(k: string): void {
    this.coverage[k] = (this.coverage[k] ?? 0) + 1;
  }

  opcode(name: string): void {
    this.opcodes[name] = (this.opcodes[name] ?? 0) + 1;
  }

  error(name: string): void {
    this.errorsHit[name] = (this.errorsHit[name] ?? 0) + 1;
  }

  /** Nothing wrong so far. */
  get clean(): boolean {
    return this.mismatches.count === 0 && this.violations.count === 0;
  }

  /** The result fields: counts, the first of each, error codes raised and not, opcodes, coverage. */
  result() {
    return {
      mismatches: this.mismatches.count,
      violations: this.violations.count,
      firstMismatch: this.mismatches.first ?? null,
      firstViolation: this.violations.first ?? null,
      errorsHit: this.errorsHit,
      errorsMissed: RX_ERROR_CODES.filter((e) => !this.errorsHit[e.name]).map((e) => `${formatErrorCode(e)} ${e.name}`),
      opcodes: this.opcodes,
      coverage: this.coverage,
    };
  }
}
