/**
 * Drives a valid/ready interface that carries one record per transfer (not AXI4-Stream: each field
 * on a port of its own, `<prefix>_<field>`; record-group.ts) from a queue. The head's fields are
 * driven when it is offered and held, with valid, until the DUT takes it. Without a ready port
 * every transfer is taken at once (a configuration write port).
 */
import type { SimModel } from '../verilator/model';
import type { PortHandle } from '../verilator/model';
import type { Component } from './component';
import type { PauseGen } from './pause';
import { RecordGroup, type Fields, type Handshake, type RecordGroupOptions } from './record-group';

export interface RecordSourceOptions<T> extends Omit<RecordGroupOptions, 'direction'>, Handshake {
  /** An item's fields (default: the item is its fields). */
  readonly fields?: (item: T) => Fields;
  /**
   * Fields driven before each item's own, when it is offered: for instance random values for the
   * fields its kind does not use, which the DUT must ignore.
   */
  readonly filler?: () => Fields;
  /** A gap before an item: asked once per cycle while one waits to be offered. */
  readonly gap?: PauseGen;
  /** Whether the head may be offered now (asked after `gap`). */
  readonly when?: (item: T) => boolean;
  /** Called at the handshake that takes an item. */
  readonly onAccept?: (item: T) => void;
}

export class RecordSource<T = Fields> implements Component {
  readonly queue: T[] = [];
  readonly group: RecordGroup;
  private offering = false;
  private accepted = 0;
  private readonly valid: PortHandle;
  private readonly ready: PortHandle | null;

  constructor(
    private readonly m: SimModel,
    prefix: string,
    private readonly o: RecordSourceOptions<T> = {},
  ) {
    const valid = o.valid ?? `${prefix}_valid`;
    const ready = o.ready === undefined ? `${prefix}_ready` : o.ready;
    this.group = new RecordGroup(m, prefix, { ...o, direction: 'input', exclude: [valid, ...(ready ? [ready] : [])] });
    this.valid = m.handle(valid);
    this.ready = ready === null ? null : m.handle(ready);
  }

  push(...items: T[]): void {
    this.pushAll(items);
  }

  /** Queues every item of a list of any length (a spread argument list overflows the stack). */
  pushAll(items: Iterable<T>): void {
    for (const item of items) this.queue.push(item);
  }

  drive(): void {
    const o = this.o;
    if (!this.offering && this.queue.length && !(o.gap && o.gap.next()) && (!o.when || o.when(this.queue[0]!))) {
      const item = this.queue[0]!;
      if (o.filler) this.group.poke(o.filler());
      this.group.poke(o.fields ? o.fields(item) : (item as Fields));
      this.offering = true;
    }
    this.m.pokeNumber(this.valid, this.offering ? 1 : 0);
  }

  sample(): void {
    if (this.offering && (this.ready === null || this.m.peekPreNumber(this.ready) === 1)) {
      this.offering = false;
      const item = this.queue.shift()!;
      this.accepted++;
      this.o.onAccept?.(item);
    }
  }

  /** Nothing queued and nothing offered. */
  get idle(): boolean {
    return !this.offering && this.queue.length === 0;
  }

  /** Items the DUT has taken. */
  get acceptedCount(): number {
    return this.accepted;
  }
}
