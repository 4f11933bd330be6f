/**
 * What a run found wrong, kept as the harnesses report it: how many, and the first few in the
 * order found (the first is the one a report leads with).
 */
export class Tally<T> {
  count = 0;
  readonly kept: T[] = [];

  constructor(private readonly keep = 20) {}

  add(x: T): void {
    this.count++;
    if (this.kept.length < this.keep) this.kept.push(x);
  }

  get first(): T | undefined {
    return this.kept[0];
  }
}
