/**
 * Seeded randomness for tests. Every random test draws from `SEED` (RNIC_SEED in the
 * environment, else a fixed default) and `withSeed` names the seed in any failure, so a failing
 * run replays with `RNIC_SEED=<seed> make test`.
 */
export const SEED: number = process.env.RNIC_SEED ? Number(process.env.RNIC_SEED) >>> 0 : 0x1d0c5eed;

export interface Rng {
  readonly seed: number;
  /** Uniform 32-bit unsigned integer. */
  u32(): number;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  bool(pTrue?: number): boolean;
  bytes(n: number): Uint8Array;
  pick<T>(items: readonly T[]): T;
}

/** splitmix32: small, fast, and good enough to drive test generation. */
export function rng(seed: number): Rng {
  let s = seed >>> 0;
  const u32 = (): number => {
    s = (s + 0x9e3779b9) >>> 0;
    let z = s;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
    return (z ^ (z >>> 16)) >>> 0;
  };
  const int = (lo: number, hi: number): number => lo + Math.floor((u32() / 0x100000000) * (hi - lo + 1));
  return {
    seed,
    u32,
    int,
    bool: (p = 0.5) => u32() / 0x100000000 < p,
    bytes: (n) => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i++) b[i] = u32() & 0xff;
      return b;
    },
    pick: (items) => items[int(0, items.length - 1)]!,
  };
}

/** Runs `fn` with a generator seeded from `SEED` and `salt`; failures carry the replay line. */
export function withSeed<T>(salt: number, fn: (r: Rng) => T): T {
  const seed = (SEED ^ Math.imul(salt, 0x9e3779b1)) >>> 0;
  try {
    return fn(rng(seed));
  } catch (e) {
    if (e instanceof Error) e.message += `\n  [random test: RNIC_SEED=${SEED} (salt ${salt}, seed ${seed}); replay with RNIC_SEED=${SEED} make test]`;
    throw e;
  }
}

export const hex = (b: Uint8Array): string => Buffer.from(b.buffer, b.byteOffset, b.length).toString('hex');
export const unhex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'hex'));
