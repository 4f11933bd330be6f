import type { Component } from './component';
import type { PortHandle, SimModel } from '../verilator/model';

/**
 * Drives a plain valid/ready interface (not AXI4-Stream: one record per transfer, its fields on
 * ports of their own) from a queue: `poke` writes the head's fields, valid stays high until the DUT
 * takes it. `ready` null: the interface is always accepted (a configuration write port).
 */
export class QueueSource<T> implements Component {
  readonly queue: T[] = [];
  private offering = false;

  constructor(
    private readonly m: SimModel,
    private readonly valid: PortHandle,
    private readonly ready: PortHandle | null,
    private readonly poke: (x: T) => void,
  ) {}

  drive(): void {
    if (!this.offering && this.queue.length) {
      this.poke(this.queue[0]!);
      this.offering = true;
    }
    this.m.pokeNumber(this.valid, this.offering ? 1 : 0);
  }

  sample(): void {
    if (this.offering && (this.ready === null || this.m.peekPreNumber(this.ready) === 1)) {
      this.offering = false;
      this.queue.shift();
    }
  }

  /** Nothing queued and nothing offered. */
  get idle(): boolean {
    return !this.offering && this.queue.length === 0;
  }
}
