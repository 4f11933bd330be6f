import { prng, type Prng } from '../../ts-model/util/prng';
/**
 * Seeded randomness for tests. Every random test draws from `SEED` (RNIC_SEED in the
 * environment, else a fixed default) and `withSeed` names the seed in any failure, so a failing
 * run replays with `RNIC_SEED=<seed> make test`.
 */
export const SEED: number = process.env.RNIC_SEED ? Number(process.env.RNIC_SEED) >>> 0 : 0x1d0c5eed;

export type Rng = Prng;

/** The project's seeded generator (ts-model/util/prng.ts). */
export const rng = (seed: number): Rng => prng(seed);

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

export { hex } from '../../ts-model/util/hex';
/** Hex octets to bytes, with the model's own parser (a bad vector throws instead of shrinking). */
export { parseHexOctets as unhex } from '../../ts-model/util/hex';
