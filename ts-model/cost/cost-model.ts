/**
 * Cycle-approximate cost of one FPDU in each datapath stage, for a datapath of `width` octets per
 * cycle. The RTL is held against these numbers (co-simulation reports the error per FPDU), so they
 * describe the intended micro-architecture: every stage streams at full rate, one beat per cycle,
 * and adds no bubbles beyond the octets it inserts or removes.
 *
 * - mpaTx: beats of the FPDU's wire octets (markers, PAD and CRC included).
 * - mpaRx: beats of the same wire octets on the way in, and MPA_RX_SWITCH_CYCLES more when the
 *   FPDU's TCP segment is another QP's than the one before (the receive MPA block shared by the
 *   QPs switches context there, hdl-gen/blocks/mpa-rx.ts).
 * - ddpRx: beats of the ULPDU (markers stripped) through header decode and the checks.
 * - place: memory-write beats, which depend on the target address' alignment to the width.
 */
export interface StageCycles {
  readonly mpaTx: number;
  readonly mpaRx: number;
  readonly ddpRx: number;
  readonly place: number;
}

/**
 * Cycles the shared receive MPA block stops its input when a segment is another QP's: the reader
 * finishes the last QP's beats and loads the next QP's context, read ahead (the last QP's verdicts
 * meanwhile finish in the CRC pipeline beside the new QP's beats).
 */
export const MPA_RX_SWITCH_CYCLES = 2;

/**
 * Cycles the shared ulpdu_reasm stops its input when a ULPDU is another QP's (its context read
 * from block RAM, the beat taken the cycle after; hdl-gen/blocks/ulpdu-reasm.ts).
 */
export const ULPDU_REASM_SWITCH_CYCLES = 1;

/**
 * Cycles rnic_top's receive path stops s_axis at a context switch: mpa_rx's, and ulpdu_reasm's
 * behind it, which at 64 octets follows mpa_rx's first beat of the new QP and so adds (at 8 octets
 * it hides behind mpa_rx's beats, within ±1 %).
 */
export const RX_SWITCH_CYCLES = MPA_RX_SWITCH_CYCLES + ULPDU_REASM_SWITCH_CYCLES;

/** rnic_top's s_axis cycles for an FPDU that is a TCP segment of its own: its beats and a switch. */
export const rxInputCycles = (width: number, f: Pick<FpduShape, 'wireLength' | 'switched'>): number => beats(f.wireLength, width) + (f.switched ? RX_SWITCH_CYCLES : 0);

export interface FpduShape {
  readonly wireLength: number;
  /** The FPDU's segment is another QP's than the segment before (a context switch on receive). */
  readonly switched?: boolean;
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
    mpaRx: beats(f.wireLength, width) + (f.switched ? MPA_RX_SWITCH_CYCLES : 0),
    ddpRx: beats(f.ulpduLength, width),
    place,
  };
}

export const totalCycles = (c: StageCycles): number => c.mpaTx + c.mpaRx + c.ddpRx + c.place;
