/**
 * splitmix32: a small, fast, seedable generator for test data and random workloads. Every random
 * stream in the project comes from a seed, so a run replays exactly.
 */
export interface Prng {
  readonly seed: number;
  /** Uniform 32-bit unsigned integer. */
  u32(): number;
  /** Uniform 64-bit unsigned integer: two u32 draws, the first the high half. */
  u64(): bigint;
  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number;
  bool(pTrue?: number): boolean;
  bytes(n: number): Uint8Array;
  pick<T>(items: readonly T[]): T;
}

export function prng(seed: number): Prng {
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
    u64: () => {
      const hi = u32();
      return (BigInt(hi) << 32n) | BigInt(u32());
    },
    int,
    bool: (p = 0.5) => u32() / 0x100000000 < p,
    bytes: (n) => {
      const b = new Uint8Array(n);
      for (let i = 0; i < n; i += 4) {
        const v = u32();
        for (let k = 0; k < 4 && i + k < n; k++) b[i + k] = (v >>> (8 * k)) & 0xff;
      }
      return b;
    },
    pick: (items) => items[int(0, items.length - 1)]!,
  };
}
