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
 * the mapped netlist and names its slowest path, the one to shorten. The estimate is close to the
 * target (within about 10% on the blocks measured), not equal to it: passes after abc9 (the
 * flip-flops' enables and resets, `xilinx_dffopt`) move a LUT or two, and ABC sees an inverter
 * as free where the netlist has an INV cell.
 */
import { netNames, readModule, type YosysModule } from './depth';

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
export function abc9Delay(netlistJson: string, top: string, arcs: CellArcs, exclude: RegExp): DelayPath | null {
  const m: YosysModule = readModule(netlistJson, top);
  const names = netNames(m);
  /** For each bit a timed cell drives: the cell's type, its output pin, and its inputs by pin. */
  const driver = new Map<number, { type: string; out: string; ins: { bit: number; pin: string }[] }>();
  const ends: { bit: number; what: string }[] = [];
  const pin = (p: string, bits: readonly unknown[], i: number) => (bits.length > 1 ? `${p}[${i}]` : p);
  for (const c of Object.values(m.cells)) {
    if (TIMED.test(c.type)) {
      const ins: { bit: number; pin: string }[] = [];
      for (const [p, bits] of Object.entries(c.connections)) {
        if (c.port_directions[p] !== 'input') continue;
        bits.forEach((b, i) => typeof b === 'number' && ins.push({ bit: b, pin: pin(p, bits, i) }));
      }
      for (const [p, bits] of Object.entries(c.connections)) {
        if (c.port_directions[p] !== 'output') continue;
        bits.forEach((b, i) => typeof b === 'number' && driver.set(b, { type: c.type, out: pin(p, bits, i), ins }));
      }
    } else {
      const outs = Object.entries(c.connections).flatMap(([p, bits]) => (c.port_directions[p] === 'output' ? bits : []));
      const q = outs.map((b) => (typeof b === 'number' ? names.get(b) : undefined)).find((x) => x !== undefined) ?? c.type;
      for (const [p, bits] of Object.entries(c.connections)) {
        if (c.port_directions[p] !== 'input') continue;
        for (const b of bits) if (typeof b === 'number') ends.push({ bit: b, what: `${q} (${c.type}.${p})` });
      }
    }
  }
  for (const [p, port] of Object.entries(m.ports)) {
    if (port.direction !== 'output') continue;
    port.bits.forEach((b, i) => typeof b === 'number' && ends.push({ bit: b, what: port.bits.length > 1 ? `${p}[${i}]` : p }));
  }
  // Arrival per bit with the input it came through; iterative, as flow/depth.ts (deep netlists).
  const memo = new Map<number, { at: number; from: number | null }>();
  const visiting = new Set<number>();
  const solve = (start: number): void => {
    const stack = [start];
    while (stack.length) {
      const x = stack[stack.length - 1]!;
      if (memo.has(x)) {
        stack.pop();
        continue;
      }
      const d = driver.get(x);
      if (!d) {
        const name = names.get(x);
        memo.set(x, { at: name !== undefined && exclude.test(name) ? -Infinity : 0, from: null });
        stack.pop();
        continue;
      }
      const pending = d.ins.filter((i) => !memo.has(i.bit));
      if (pending.length && !visiting.has(x)) {
        visiting.add(x);
        stack.push(...pending.map((i) => i.bit));
        continue;
      }
      const cell = arcs.get(d.type);
      let best = -Infinity;
      let from: number | null = null;
      for (const i of d.ins) {
        const arc = cell?.get(`${i.pin}>${d.out}`);
        if (arc === undefined) continue;
        const a = (memo.get(i.bit)?.at ?? 0) + arc;
        if (a > best) {
          best = a;
          from = i.bit;
        }
      }
      memo.set(x, { at: from === null ? 0 : best + (LUT.test(d.type) ? ABC9_WIRE_PS : 0), from });
      visiting.delete(x);
      stack.pop();
    }
  };
  let worst: { at: number; end: (typeof ends)[number] } | null = null;
  for (const e of ends) {
    solve(e.bit);
    const at = memo.get(e.bit)!.at;
    if (at > 0 && (!worst || at > worst.at)) worst = { at, end: e };
  }
  if (!worst) return null;
  let luts = 0;
  let carries = 0;
  let x: number | null = worst.end.bit;
  let start = x;
  while (x !== null && driver.has(x)) {
    const t = driver.get(x)!.type;
    if (LUT.test(t)) luts++;
    if (t === 'CARRY4') carries++;
    start = memo.get(x)?.from ?? x;
    x = memo.get(x)?.from ?? null;
  }
  return { ps: Math.round(worst.at), start: names.get(start) ?? `bit ${start}`, end: worst.end.what, luts, carries };
}
