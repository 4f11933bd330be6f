/**
 * RecordSink's counterpart in the addon (sim/verilator/channel.ts): ready from the pause and the
 * records taken logged in C++ inside `SimModel.run` with their cycle; `records` decodes and maps
 * the log when read, giving what RecordSink gives (`map(fields, cycle)` with the same cycle).
 *
 * Not here, because they would run after a batch rather than in the record's cycle: `onRecord`
 * and the `stable` check (an invariant); use RecordSink for those.
 */
import type { SimModel } from '../verilator/model';
import { LOG_CYCLE_WORDS, NativeSinkChannel, STATUS_ITEMS, type Reaches } from '../verilator/channel';
import { never, type PauseGen } from './pause';
import { RecordGroup, type Sampled } from './record-group';
import type { RecordSinkOptions } from './record-sink';

export class NativeRecordSink<T = Sampled> {
  readonly group: RecordGroup;
  private readonly channel: NativeSinkChannel;
  private readonly kept: T[] = [];

  constructor(
    m: SimModel,
    readonly prefix: string,
    private readonly o: RecordSinkOptions<T> = {},
  ) {
    if (o.onRecord || o.stable) throw new Error(`${prefix}: a native record sink has no onRecord or stable check (they would run after a batch); use RecordSink`);
    const valid = o.valid ?? `${prefix}_valid`;
    const ready = o.ready ?? `${prefix}_ready`;
    if (!m.has(ready)) throw new Error(`RecordSink drives ${ready}, which ${m.top} does not have`);
    this.group = new RecordGroup(m, prefix, { ...o, direction: 'output', exclude: [valid, ready] });
    this.channel = new NativeSinkChannel(m, { valid: m.handle(valid), ready: m.handle(ready), payload: this.group.fields.map((f) => f.port) }, o.pause ?? never());
  }

  setPause(pause: PauseGen): void {
    this.channel.setPause(pause);
  }

  /** Records taken so far (kept or not). */
  get count(): number {
    return this.channel.items;
  }

  /** `() => count ≥ n`, which Testbench.until can run natively. */
  reaches(n: number): Reaches {
    return this.channel.reaches(STATUS_ITEMS, n);
  }

  /** Every record taken so far, oldest first (the same array each time, brought up to date). */
  get records(): T[] {
    const log = this.channel.drain();
    const stride = LOG_CYCLE_WORDS + this.channel.itemWords;
    const { map } = this.o;
    if (this.o.keep === false) return this.kept;
    for (let e = 0; e < log.length; e += stride) {
      const fields = this.group.decodeWords(log, e + LOG_CYCLE_WORDS);
      this.kept.push(map ? map(fields, NativeSinkChannel.cycleAt(log, e)) : (fields as T));
    }
    return this.kept;
  }
}
