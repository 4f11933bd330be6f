/**
 * Pause generators (cocotbext-axi's `set_pause_generator`): one boolean per clock cycle, true
 * meaning "hold off this cycle". A source will not start a new beat while paused (it never drops
 * tvalid on a beat already offered); a sink drops tready. Deterministic: the same arguments give
 * the same sequence, so a failing run replays exactly.
 *
 * A plain object with `next()` rather than a JS generator, so the per-cycle call allocates nothing.
 */

export interface PauseGen {
  /** Whether to pause in the coming cycle. */
  next(): boolean;
  /**
   * Where the sequence stands, for a native channel to carry it on in C++ (sim/verilator/channel.ts)
   * bit for bit; absent on generators C++ cannot replay (`Chance`, `withStalls`).
   */
  state?(): PauseState;
}

/** A generator's kind and position: what the addon's Pause (channels-cpp.ts) needs to continue it. */
export type PauseState =
  | { readonly kind: 'never' }
  | { readonly kind: 'always' }
  | { readonly kind: 'every'; readonly n: number; readonly i: number }
  | { readonly kind: 'pattern'; readonly bits: readonly boolean[]; readonly i: number }
  | { readonly kind: 'random'; readonly s: number; readonly threshold: number };

/** Pauses every cycle: a source that never sends, a sink that never accepts. */
export const always = (): PauseGen => ({ next: () => true, state: () => ({ kind: 'always' }) });

/** Never pauses: full throughput. */
export const never = (): PauseGen => ({ next: () => false, state: () => ({ kind: 'never' }) });

/** Pauses one cycle in every `n` (the n-th, 2n-th, …): `every(4)` runs at 3/4 rate. */
export function every(n: number): PauseGen {
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`every(${n}): n must be a positive integer`);
  let i = 0;
  return {
    next: () => {
      i = i + 1 === n ? 0 : i + 1;
      return i === 0;
    },
    state: () => ({ kind: 'every', n, i }),
  };
}

/** Repeats a pattern of '1' (pause) and '0' (go) characters: '1100' pauses two cycles in four. */
export function pattern(p: string): PauseGen {
  if (!/^[01]+$/.test(p)) throw new Error(`pause pattern ${JSON.stringify(p)} must be a non-empty string of '0' and '1'`);
  const bits = [...p].map((c) => c === '1');
  let i = 0;
  return {
    next: () => {
      const pause = bits[i]!;
      i = i + 1 === bits.length ? 0 : i + 1;
      return pause;
    },
    state: () => ({ kind: 'pattern', bits, i }),
  };
}

const U32_RANGE = 2 ** 32;
const GOLDEN_GAMMA = 0x9e3779b9;
const MIX_1 = 0x85ebca6b;
const MIX_2 = 0xc2b2ae35;

/** Pauses each cycle with probability `pPause`, from a splitmix32 stream seeded with `seed`. */
export function random(seed: number, pPause: number): PauseGen {
  if (!(pPause >= 0 && pPause <= 1)) throw new RangeError(`random(seed, ${pPause}): pPause must be in [0, 1]`);
  let s = seed >>> 0;
  const threshold = pPause * U32_RANGE;
  return {
    next: () => {
      s = (s + GOLDEN_GAMMA) >>> 0;
      let z = s;
      z = Math.imul(z ^ (z >>> 16), MIX_1);
      z = Math.imul(z ^ (z >>> 13), MIX_2);
      return (z ^ (z >>> 16)) >>> 0 < threshold;
    },
    state: () => ({ kind: 'random', s, threshold }),
  };
}

/**
 * Pauses each cycle with probability `p`, drawn from `r`: a stream the testbench shares with its
 * other random choices, so the draws interleave with theirs in component order (the order the
 * top-level harnesses' seeds replay in). `p` may change between cycles; at 0 nothing is drawn.
 */
export class Chance implements PauseGen {
  constructor(
    private readonly r: { bool(pTrue: number): boolean },
    public p: number,
  ) {}

  next(): boolean {
    return this.p > 0 && this.r.bool(this.p);
  }
}

/**
 * `base`, plus now and then (when `start` says so) a stall of `length` cycles: long enough for a
 * block to fill every buffer behind a paused port, which short random pauses never do.
 */
export function withStalls(base: PauseGen, start: PauseGen, length: number): PauseGen {
  let left = 0;
  return {
    next: () => {
      if (left > 0) return left-- > 0;
      if (start.next()) left = length - 1;
      return left > 0 || base.next();
    },
  };
}
