import { accessSync, constants, readFileSync, realpathSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join } from 'node:path';
import { FlowError } from './run-tool';

/**
 * Block RAM under abc9 on yosys 0.23 (Debian 12's yosys). `synth_xilinx -abc9` aborts in
 * `abc9_ops -prep_delays` (std::out_of_range, YosysHQ/yosys#3384) on any design holding a RAMB18E1
 * or RAMB36E1: their clock-to-out arcs are conditional on a parameter (`if (&DOA_REG) (posedge
 * CLKARDCLK => (DOADO : 16'bx)) = 2454;`), which that version cannot evaluate. The fix: after
 * synth_xilinx reads its cell library, read the two block RAMs again without their specify blocks
 * (same ports and parameters). A block RAM's outputs start a register-to-register path and its
 * inputs end one either way, so no LUT level changes; only abc9's delay target loses the RAM's
 * 0.9–2.5 ns clock-to-out, which the LUT-level count does not use.
 */

/** The file the synthesis script reads, in its work directory. */
export const BRAM_BOXES_FILE = 'bram_boxes.v';

const BLOCK_RAMS = ['RAMB18E1', 'RAMB36E1'] as const;

/** The yosys share directory: `<bin>/../share/yosys`, where yosys itself looks for `+/`. */
function shareDir(yosys: string): string {
  const candidates = isAbsolute(yosys) ? [yosys] : (process.env.PATH ?? '').split(delimiter).map((d) => join(d, yosys));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return join(dirname(realpathSync(c)), '..', 'share', 'yosys');
    } catch {
      // not this one
    }
  }
  throw new FlowError(`${yosys} is not installed (not on PATH)`);
}

/** yosys's own Xilinx cell library (xilinx/cells_sim.v): the cells with their timing arcs. */
export function xilinxCellLibrary(yosys: string): string {
  const file = join(shareDir(yosys), 'xilinx', 'cells_sim.v');
  try {
    return readFileSync(file, 'utf8');
  } catch {
    throw new FlowError(`yosys's Xilinx cell library not found at ${file}`);
  }
}

/** RAMB18E1 and RAMB36E1 from yosys's own cells_sim.v, specify blocks removed. */
export function bramBoxes(yosys: string): string {
  const file = join(shareDir(yosys), 'xilinx', 'cells_sim.v');
  const text = xilinxCellLibrary(yosys);
  return BLOCK_RAMS.map((name) => {
    const start = text.indexOf(`module ${name} (`);
    const end = start < 0 ? -1 : text.indexOf('endmodule', start);
    if (end < 0) throw new FlowError(`${file} has no module ${name}`);
    return text.slice(start, end + 'endmodule'.length).replace(/\bspecify\b[\s\S]*?\bendspecify\b/g, '');
  }).join('\n\n') + '\n';
}
