/**
 * What each synthesis target means: the yosys command that maps the design, which mapped cells
 * count as LUTs, flip-flops and carry cells, and which cells make up a combinational path when
 * yosys's `ltp` measures logic depth.
 */

import { BRAM_BOXES_FILE } from './xilinx-bram';

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
  /** Dedicated memory blocks (undefined: the target maps every memory to logic). */
  isBlockRam?(cellType: string): boolean;
  /** Memory in LUTs (Xilinx distributed RAM); undefined where the fabric has none. */
  isLutRam?(cellType: string): boolean;
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
  // SB_RAM40_4K and its NR/NW/NRNW clock-polarity variants: 4 kbit, 256 x 16 at the widest.
  isBlockRam: (t) => t.startsWith('SB_RAM40_4K'),
};

/**
 * 7-series. `-noiopad -noclkbuf`: the module is measured as a block inside a larger design, so no
 * IBUF/OBUF/BUFG (they would add one cell per port bit and a level at each end of every path).
 * INV counts as a LUT because the implementation tools place it in a LUT1.
 */
const XILINX: TargetProfile = {
  // In two runs around the prepare step, so the block RAMs are read again without their timing
  // arcs in between (flow/xilinx-bram.ts says why).
  synthCommand: (top) => {
    const synth = `synth_xilinx -top ${top} -flatten -abc9 -noiopad -noclkbuf`;
    return [`${synth} -run begin:prepare`, `read_verilog -lib -overwrite ${BRAM_BOXES_FILE}`, `${synth} -run prepare:`].join('\n');
  },
  depthSelection: 'w:* t:LUT* t:INV t:CARRY* t:MUXF*',
  isLut: (t) => /^LUT[1-6]$/.test(t) || t === 'INV',
  isFlipFlop: (t) => /^FD[RSCP]E(_1)?$/.test(t),
  isCarry: (t) => t === 'CARRY4' || t === 'CARRY8',
  // RAMB18E1 and RAMB36E1 (a RAMB36 is two RAMB18s): counted as cells, cellTypes has the split.
  isBlockRam: (t) => /^RAMB(18|36)E[12]$/.test(t),
  // Distributed RAM in SLICEM LUTs: RAM32M (4 LUTs), RAM64M, RAM32X1D, RAM64X1S, RAM128X1D, ...
  isLutRam: (t) => /^RAM(32M|64M|32M16|64M8|\d+X1[SD])$/.test(t),
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
  /** Block RAM cells; undefined for a target without them (generic). */
  rams?: number;
  /** Distributed-RAM cells; undefined for a target without them (generic, iCE40). */
  lutRams?: number;
}

/** LUTs, flip-flops (all variants summed), carry cells and RAM cells in a `stat` cell table. */
export function classifyCells(profile: TargetProfile, cellTypes: Readonly<Record<string, number>>): CellClassCounts {
  const counts: CellClassCounts = { luts: 0, ffs: 0, carries: 0 };
  let rams = 0;
  let lutRams = 0;
  for (const [type, n] of Object.entries(cellTypes)) {
    if (profile.isLut(type)) counts.luts += n;
    else if (profile.isFlipFlop(type)) counts.ffs += n;
    else if (profile.isCarry(type)) counts.carries += n;
    else if (profile.isBlockRam?.(type)) rams += n;
    else if (profile.isLutRam?.(type)) lutRams += n;
  }
  if (profile.isBlockRam) counts.rams = rams;
  if (profile.isLutRam) counts.lutRams = lutRams;
  return counts;
}
