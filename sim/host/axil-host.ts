import { AXI_RESP } from '../../hdl-gen/lib/regmap';
import type { AxilMaster } from '../cocotb/axil-master';
import type { AxilOp } from './axil-config';

/**
 * Runs host programs (lists of AxilOp, axil-config.ts) on an AXI4-Lite master, one program after
 * another, as a driver would: writes are posted back to back (the master keeps several
 * outstanding), a poll waits for every write before it to be answered and then reads until its
 * condition holds. A response other than OKAY is a host error (`errors`); the program goes on.
 */
export class AxilHost {
  readonly errors: string[] = [];
  private readonly programs: { readonly ops: readonly AxilOp[]; readonly done?: () => void }[] = [];
  private at = 0;
  private unanswered = 0;
  private polling = false;
  /** Polls that read their condition false (each costs a read). */
  pollReads = 0;

  constructor(private readonly master: AxilMaster) {}

  /** Queues a program; `done` is called once its last operation has completed. */
  run(ops: readonly AxilOp[], done?: () => void): void {
    this.programs.push({ ops, ...(done && { done }) });
    if (this.programs.length === 1) this.step();
  }

  /** No program queued or running. */
  get idle(): boolean {
    return this.programs.length === 0;
  }

  private error(s: string): void {
    if (this.errors.length < 20) this.errors.push(s);
  }

  /** Issues what the current program can issue now; finishes it (and starts the next) when done. */
  private step(): void {
    for (;;) {
      const p = this.programs[0];
      if (!p || this.polling) return;
      const op = p.ops[this.at];
      if (!op) {
        if (this.unanswered > 0) return;
        this.programs.shift();
        this.at = 0;
        p.done?.();
        continue;
      }
      if (op.kind === 'write') {
        this.at++;
        this.unanswered++;
        this.master.write({
          addr: op.addr,
          data: op.data,
          done: (resp) => {
            if (resp !== AXI_RESP.OKAY) this.error(`write ${op.name} (0x${op.addr.toString(16)} <- 0x${op.data.toString(16)}): response ${resp}`);
            this.unanswered--;
            this.step();
          },
        });
        continue;
      }
      if (this.unanswered > 0) return;
      this.polling = true;
      const poll = (): void =>
        this.master.read({
          addr: op.addr,
          done: (resp, data) => {
            if (resp !== AXI_RESP.OKAY) this.error(`poll ${op.name}: response ${resp}`);
            if (resp === AXI_RESP.OKAY && (data & op.mask) !== op.value) {
              this.pollReads++;
              poll();
              return;
            }
            this.polling = false;
            this.at++;
            this.step();
          },
        });
      poll();
      return;
    }
  }
}

/**
 * A queue of items (QP contexts, STag entries) that reach the DUT as host programs: the interface
 * of the record sources it replaces (push, idle, acceptedCount), so a bench drives the top's
 * configuration ports or the AXI4-Lite wrapper's registers alike. An item is accepted when its
 * program has completed (the record has gone to rnic_top).
 */
export class AxilItemQueue<T> {
  /** Items not yet accepted, oldest first. */
  readonly queue: T[] = [];
  private accepted = 0;

  constructor(
    private readonly host: AxilHost,
    private readonly program: (item: T) => readonly AxilOp[],
    private readonly onAccept?: (item: T) => void,
  ) {}

  push(...items: T[]): void {
    this.pushAll(items);
  }

  pushAll(items: Iterable<T>): void {
    for (const item of items) {
      this.queue.push(item);
      this.host.run(this.program(item), () => {
        this.queue.shift();
        this.accepted++;
        this.onAccept?.(item);
      });
    }
  }

  get idle(): boolean {
    return this.queue.length === 0;
  }

  get acceptedCount(): number {
    return this.accepted;
  }
}
