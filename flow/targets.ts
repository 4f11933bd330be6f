/**
 * What each synthesis target means: the yosys command that maps the design, which mapped cells
 * count as LUTs, flip-flops and carry cells, and which cells make up a combinational path when
 * yosys's `ltp` measures logic depth.
 */

export type SynthTarget = 'ice40' | 'generic' | 'xilinx';

export const SYNTH_TARGETS: readonly SynthTarget[] = Object.freeze(['ice40', 'generic', 'xilinx']);

export interface TargetProfile {
  /** The yosys synthesis command for top module `top`; always flattens (see flow/README.md). */
  synthCommand(top: string): string;
  /**
   * The `ltp` selection: the combinational cells of the mapped netlist, plus all wires (ltp only
   * follows selected wires). Everything else (flip-flops, RAMs, DSPs, ports) ends a path.
   */
  depthSelection: string;
  isLut(cellType: string): boolean;
  isFlipFlop(cellType: string): boolean;
  isCarry(cellType: string): boolean;
}

const never = (): boolean => false;

/** yosys's internal gate library: `$_AND_`, `$_MUX_`, … and `$_DFF_P_`, `$_SDFFE_PP0P_`, … */
const GENERIC: TargetProfile = {
  synthCommand: (top) => `synth -top ${top} -flatten`,
  // -noff already knows yosys's own flip-flop cells, so every other cell is combinational.
  depthSelection: '',
  isLut: never,
  isFlipFlop: (t) => /^\$_(DFF|SDFF|ALDFF|DFFSR|FF_)/.test(t),
  isCarry: never,
};

/** iCE40: an SB_LUT4 and an SB_CARRY share a logic cell; SB_DFF* has a dozen enable/reset variants. */
const ICE40: TargetProfile = {
  synthCommand: (top) => `synth_ice40 -top ${top}`,
  depthSelection: 'w:* t:SB_LUT4 t:SB_CARRY',
  isLut: (t) => t === 'SB_LUT4',
  isFlipFlop: (t) => t.startsWith('SB_DFF'),
  isCarry: (t) => t === 'SB_CARRY',
};

/**
 * 7-series. `-noiopad -noclkbuf`: the module is measured as a block inside a larger design, so no
 * IBUF/OBUF/BUFG (they would add one cell per port bit and a level at each end of every path).
 * INV counts as a LUT because the implementation tools place it in a LUT1.
 */
const XILINX: TargetProfile = {
  synthCommand: (top) => `synth_xilinx -top ${top} -flatten -noiopad -noclkbuf`,
  depthSelection: 'w:* t:LUT* t:INV t:CARRY* t:MUXF*',
  isLut: (t) => /^LUT[1-6]$/.test(t) || t === 'INV',
  isFlipFlop: (t) => /^FD[RSCP]E(_1)?$/.test(t),
  isCarry: (t) => t === 'CARRY4' || t === 'CARRY8',
};

export const TARGET_PROFILES: Readonly<Record<SynthTarget, TargetProfile>> = Object.freeze({
  generic: GENERIC,
  ice40: ICE40,
  xilinx: XILINX,
});

export interface CellClassCounts {
  luts: number;
  ffs: number;
  carries: number;
}

/** LUTs, flip-flops (all variants summed) and carry cells in a `stat` cell table. */
export function classifyCells(profile: TargetProfile, cellTypes: Readonly<Record<string, number>>): CellClassCounts {
  const counts: CellClassCounts = { luts: 0, ffs: 0, carries: 0 };
  for (const [type, n] of Object.entries(cellTypes)) {
    if (profile.isLut(type)) counts.luts += n;
    else if (profile.isFlipFlop(type)) counts.ffs += n;
    else if (profile.isCarry(type)) counts.carries += n;
  }
  return counts;
}
