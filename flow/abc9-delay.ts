/**
 * The delay abc9 maps a Xilinx netlist for, and the path that sets it.
 *
 * `synth_xilinx -abc9` maps with ABC's `&if -W 300` on yosys's own timing model: every LUT input
 * has its own delay (the specify arcs of yosys's xilinx/cells_sim.v, from prjxray's SDF: on a LUT6
 * I5 is 127 ps, I0 642 ps), 300 ps of wire follow every LUT (-W), and carry and wide-mux cells
 * have their arcs; flip-flops and block RAMs start and end paths at 0 (flow/xilinx-bram.ts). ABC
 * first finds the least delay it can reach on the slowest path (its `Del`), then recovers area on
 * every other path up to that same delay. A path under it may so end up in more, faster LUT
 * levels: a LUT2 on its fast pin and its wire are 427 ps, seven of them fit under 3 ns. So a
 * block's LUT levels (flow/depth.ts) follow its slowest path in this model, often a carry chain,
 * and taking a level off one path without lowering that delay moves the level to another path.
 *
 * `abc9Target` reads abc9's own `Del` from the yosys log; `abc9Delay` estimates the same model on
 * the mapped netlist (flow/depth.ts `readModule`) and names its slowest path, the one to shorten.
 * The estimate is close to the target (within about 10% on the blocks measured), not equal to it:
 * passes after abc9 (the flip-flops' enables and resets, `xilinx_dffopt`) move a LUT or two, and
 * ABC sees an inverter as free where the netlist has an INV cell.
 */
import { combGraph, longestPath, type YosysModule } from './depth';

/** ABC's wire delay per LUT in synth_xilinx -abc9 (`&if -W 300`, yosys 0.23). */
export const ABC9_WIRE_PS = 300;

/** Per cell type, the delay in ps of each arc `input pin>output pin` (bus bits as `S[0]`). */
export type CellArcs = ReadonlyMap<string, ReadonlyMap<string, number>>;

const TIMED = /^(LUT[1-6]|INV|MUXF[78]|CARRY4)$/;
/** Cells ABC maps as LUTs: a wire delay after each. */
const LUT = /^(LUT[1-6]|INV)$/;
const ARC = /\(\s*([\w[\]]+)\s*=>\s*([\w[\]]+)\s*\)\s*=\s*([^;]+);/g;

/** The arcs of the LUT, carry and wide-mux cells in yosys's xilinx/cells_sim.v (specify blocks). */
export function xilinxArcs(cellLibrary: string): CellArcs {
  const arcs = new Map<string, Map<string, number>>();
  for (const mod of cellLibrary.matchAll(/\bmodule\s+(\w+)\b([\s\S]*?)\bendmodule\b/g)) {
    const [, name, body] = mod;
    if (!TIMED.test(name!)) continue;
    const cell = new Map<string, number>();
    for (const spec of body!.matchAll(/\bspecify\b([\s\S]*?)\bendspecify\b/g)) {
      for (const [, from, to, value] of spec[1]!.matchAll(ARC)) {
        // A sum of constants with comments (`642 + 223 /* to cross F7BMUX */ + 174`).
        const terms = value!.replace(/\/\*[\s\S]*?\*\//g, '').split('+').map((t) => Number(t.trim()));
        if (terms.every((t) => Number.isFinite(t))) cell.set(`${from}>${to}`, terms.reduce((a, b) => a + b, 0));
      }
    }
    if (cell.size > 0) arcs.set(name!, cell);
  }
  return arcs;
}

/** abc9's delay target (`Del`, ps) from a yosys log, or null without one. */
export function abc9Target(yosysLog: string): number | null {
  const m = /\bDel\s*=\s*(\d+(?:\.\d+)?)/.exec(yosysLog);
  return m ? Number(m[1]) : null;
}

export interface DelayPath {
  /** Arrival at the path's end in abc9's model, ps. */
  readonly ps: number;
  readonly start: string;
  readonly end: string;
  readonly luts: number;
  readonly carries: number;
}

/**
 * The slowest register-to-register path of a mapped xilinx netlist in abc9's model (the arcs, and
 * ABC9_WIRE_PS after each LUT). Start points matching `exclude` (quasi-static configuration
 * inputs) are left out, as flow/depth.ts leaves them out.
 */
export function abc9Delay(m: YosysModule, arcs: CellArcs, exclude: RegExp): DelayPath | null {
  const g = combGraph(m, TIMED);
  const p = longestPath(g, exclude, (c, pin) => arcs.get(c.type)?.get(`${pin}>${c.out}`), (c) => (LUT.test(c.type) ? ABC9_WIRE_PS : 0));
  if (!p || p.at <= 0) return null;
  const count = (re: RegExp) => p.cells.filter((t) => re.test(t)).length;
  return { ps: Math.round(p.at), start: p.start, end: p.end, luts: count(LUT), carries: count(/^CARRY4$/) };
}
