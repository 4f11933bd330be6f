/**
 * Cycle-approximate cost of one FPDU in each datapath stage, for a datapath of `width` octets per
 * cycle. The RTL is held against these numbers (co-simulation reports the error per FPDU), so they
 * describe the intended micro-architecture: every stage streams at full rate, one beat per cycle,
 * and adds no bubbles beyond the octets it inserts or removes.
 *
 * - mpaTx: beats of the FPDU's wire octets (markers, PAD and CRC included).
 * - mpaRx: beats of the same wire octets on the way in.
 * - ddpRx: beats of the ULPDU (markers stripped) through header decode and the checks.
 * - place: memory-write beats, which depend on the target address' alignment to the width.
 */
export interface StageCycles {
  readonly mpaTx: number;
  readonly mpaRx: number;
  readonly ddpRx: number;
  readonly place: number;
}

export interface FpduShape {
  readonly wireLength: number;
  readonly ulpduLength: number;
  /** Each placement the FPDU caused: host address and length. */
  readonly placements: readonly { readonly address: bigint; readonly length: number }[];
}

export const beats = (octets: number, width: number): number => Math.ceil(octets / width);

export function fpduCycles(width: number, f: FpduShape): StageCycles {
  if (!Number.isInteger(width) || width < 1) throw new RangeError(`width must be a positive integer, got ${width}`);
  let place = 0;
  for (const p of f.placements) {
    if (p.length > 0) place += beats(Number(p.address % BigInt(width)) + p.length, width);
  }
  return {
    mpaTx: beats(f.wireLength, width),
    mpaRx: beats(f.wireLength, width),
    ddpRx: beats(f.ulpduLength, width),
    place,
  };
}

export const totalCycles = (c: StageCycles): number => c.mpaTx + c.mpaRx + c.ddpRx + c.place;
