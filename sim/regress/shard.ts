/**
 * A regression split over CI runners (`make regress SHARD=i/n`): shard i of n takes every n-th run
 * of the plan, from run i − 1, so the n shards together run the plan once, each run on one shard,
 * and a run keeps its place (and its seed) whatever the shard count.
 */
export interface Shard {
  /** 1..count */
  readonly index: number;
  readonly count: number;
}

/** `i/n` with 1 ≤ i ≤ n; anything else is an error that echoes what was given. */
export function parseShard(text: string): Shard {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  const index = m ? Number(m[1]) : NaN;
  const count = m ? Number(m[2]) : NaN;
  if (!m || count < 1 || index < 1 || index > count) throw new RangeError(`--shard must be i/n with 1 <= i <= n (e.g. 2/4), got '${text}'`);
  return { index, count };
}

/** The runs of `shard`, in plan order. */
export function shardOf<T>(runs: readonly T[], shard: Shard): T[] {
  return runs.filter((_, k) => k % shard.count === shard.index - 1);
}
