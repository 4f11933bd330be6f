/**
 * Takes the records a DUT puts out on a valid/ready interface of ports `<prefix>_<field>`
 * (record-group.ts): `RecordMonitor` watches it without driving anything, `RecordSink` also
 * drives ready from a pause generator. A record is taken at a rising edge with valid and ready
 * high (valid alone where the interface has no ready), read from the pre-edge snapshot.
 * Optionally checks the rule a sender keeps (as AXI4-Stream's, ARM IHI 0051 §2.2.1): once valid is
 * high, it and the payload hold until the handshake.
 */
import type { PortHandle, SimModel } from '../verilator/model';
import type { Component } from './component';
import { never, type PauseGen } from './pause';
import { RecordGroup, type Handshake, type RecordGroupOptions, type Sampled } from './record-group';

export interface RecordMonitorOptions<T> extends Omit<RecordGroupOptions, 'direction'>, Handshake {
  /** A record as the test wants it (default: the sampled fields). */
  readonly map?: (fields: Sampled, cycle: number) => T;
  /** Called with each record taken (besides keeping it in `records`, unless `keep` is false). */
  readonly onRecord?: (record: T) => void;
  readonly keep?: boolean;
  /** Reports valid dropped or the payload changed before the handshake. */
  readonly stable?: (violation: string) => void;
}

export class RecordMonitor<T = Sampled> implements Component {
  readonly records: T[] = [];
  readonly group: RecordGroup;
  protected readonly valid: PortHandle;
  protected readonly readyPort: PortHandle | null;
  private held: string | null = null;

  constructor(
    protected readonly m: SimModel,
    readonly prefix: string,
    private readonly o: RecordMonitorOptions<T> = {},
  ) {
    const valid = o.valid ?? `${prefix}_valid`;
    const ready = o.ready === undefined ? (m.has(`${prefix}_ready`) ? `${prefix}_ready` : null) : o.ready;
    this.group = new RecordGroup(m, prefix, { ...o, direction: 'output', exclude: [valid, ...(ready ? [ready] : [])] });
    this.valid = m.handle(valid);
    this.readyPort = ready === null ? null : m.handle(ready);
  }

  sample(): void {
    const m = this.m;
    const v = m.peekPreNumber(this.valid) === 1;
    const taken = v && (this.readyPort === null || m.peekPreNumber(this.readyPort) === 1);
    if (this.o.stable) this.check(v, taken);
    if (!taken) return;
    const f = this.group.peekPre();
    const rec = this.o.map ? this.o.map(f, m.cycles) : (f as T);
    if (this.o.keep !== false) this.records.push(rec);
    this.o.onRecord?.(rec);
  }

  private check(valid: boolean, taken: boolean): void {
    const payload = valid ? this.group.payloadPre() : '';
    if (this.held !== null) {
      if (!valid) this.o.stable!(`${this.prefix}: valid dropped before the handshake at cycle ${this.m.cycles}`);
      else if (payload !== this.held) this.o.stable!(`${this.prefix}: payload changed while waiting at cycle ${this.m.cycles}`);
    }
    this.held = valid && !taken ? payload : null;
  }
}

export interface RecordSinkOptions<T> extends RecordMonitorOptions<T> {
  readonly pause?: PauseGen;
}

export class RecordSink<T = Sampled> extends RecordMonitor<T> {
  private pause: PauseGen;
  private readonly ready: PortHandle;

  constructor(m: SimModel, prefix: string, o: RecordSinkOptions<T> = {}) {
    super(m, prefix, o);
    if (!this.readyPort) throw new Error(`RecordSink drives ${prefix}_ready, which ${m.top} does not have`);
    this.ready = this.readyPort;
    this.pause = o.pause ?? never();
  }

  setPause(pause: PauseGen): void {
    this.pause = pause;
  }

  drive(): void {
    this.m.pokeNumber(this.ready, this.pause.next() ? 0 : 1);
  }
}
