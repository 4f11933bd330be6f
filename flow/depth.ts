/**
 * Logic depth of a mapped, flattened yosys netlist (`write_json`), the measure of
 * ../shared/design/microarchitecture.md and ../shared/tools/depth.py: the longest path from a
 * register output (or an input port) to a register input (or an output port) through the
 * combinational cells, counted two ways:
 *
 * - LUT levels: LUTs (and INV, which the tools put in a LUT) count 1; carry chains (CARRY4/8) and
 *   the wide-mux cells (MUXF7/8/9) count 0, since they are fast dedicated logic;
 * - all cells: every combinational cell counts 1 (what yosys's `ltp -noff` reports).
 *
 * Paths that start at a quasi-static input (by default the configuration ports, `cfg_*`) are left
 * out: they change only while the datapath is idle. The critical path is reported by its start
 * and end signals.
 */
export interface DepthReport {
  readonly lutLevels: number;
  readonly allCells: number;
  /** The path with the most LUT levels: where it starts and ends, and its cells by type. */
  readonly critical: { readonly start: string; readonly end: string; readonly cells: Readonly<Record<string, number>> } | null;
}

interface YosysCell {
  readonly type: string;
  readonly port_directions: Readonly<Record<string, 'input' | 'output' | 'inout'>>;
  readonly connections: Readonly<Record<string, readonly (number | string)[]>>;
}

export interface YosysModule {
  readonly ports: Readonly<Record<string, { readonly direction: string; readonly bits: readonly (number | string)[] }>>;
  readonly cells: Readonly<Record<string, YosysCell>>;
  readonly netnames: Readonly<Record<string, { readonly bits: readonly (number | string)[]; readonly hide_name?: number }>>;
}

const COMBINATIONAL = /^(LUT[1-6]|INV|MUXF[789]|CARRY[48]|SB_LUT4|SB_CARRY)$/;
const LUT = /^(LUT[1-6]|INV|SB_LUT4)$/;

/** The default start points left out: configuration inputs, static while traffic flows. */
export const QUASI_STATIC = /^cfg_/;

/** Module `top` of a yosys JSON netlist. */
export function readModule(netlistJson: string, top: string): YosysModule {
  const doc = JSON.parse(netlistJson) as { modules: Record<string, YosysModule> };
  const m = doc.modules[top];
  if (!m) throw new Error(`the netlist has no module ${top}`);
  return m;
}

/**
 * A readable name per bit: visible net names first, the emitter's temporaries (_t<n>) last, so a
 * path starts at `gb_count_reg[0]`, not at a `_t2[0]` that merely copies it.
 */
function netNames(m: YosysModule): Map<number, string> {
  const names = new Map<number, string>();
  const rank = (n: string, net: { readonly hide_name?: number }) => 2 * (net.hide_name ?? 0) + (/^_t\d+$/.test(n) ? 1 : 0);
  const nets = Object.entries(m.netnames).sort(([an, a], [bn, b]) => rank(an, a) - rank(bn, b));
  for (const [n, net] of nets) {
    if (net.hide_name) continue;
    net.bits.forEach((b, i) => {
      if (typeof b === 'number' && !names.has(b)) names.set(b, net.bits.length > 1 ? `${n}[${i}]` : n);
    });
  }
  return names;
}

/** A combinational cell driving a bit: its type, the output pin, and its inputs by pin. */
export interface CombCell {
  readonly type: string;
  readonly out: string;
  readonly ins: readonly { readonly bit: number; readonly pin: string }[];
}

/** A module's combinational cells by the bits they drive, and every path end. */
export interface CombGraph {
  readonly names: ReadonlyMap<number, string>;
  readonly driver: ReadonlyMap<number, CombCell>;
  /** A register's or a RAM's input, or an output port. */
  readonly ends: readonly { readonly bit: number; readonly what: string }[];
}

/** The cells whose type matches `combinational` make the paths; every other cell ends and starts them. */
export function combGraph(m: YosysModule, combinational: RegExp): CombGraph {
  const names = netNames(m);
  const driver = new Map<number, CombCell>();
  const ends: { bit: number; what: string }[] = [];
  const pin = (p: string, bits: readonly unknown[], i: number) => (bits.length > 1 ? `${p}[${i}]` : p);
  for (const c of Object.values(m.cells)) {
    const ports = Object.entries(c.connections);
    if (combinational.test(c.type)) {
      const ins = ports.flatMap(([p, bits]) => (c.port_directions[p] === 'input' ? bits.flatMap((b, i) => (typeof b === 'number' ? [{ bit: b, pin: pin(p, bits, i) }] : [])) : []));
      for (const [p, bits] of ports) {
        if (c.port_directions[p] === 'output') bits.forEach((b, i) => typeof b === 'number' && driver.set(b, { type: c.type, out: pin(p, bits, i), ins }));
      }
    } else {
      const outs = ports.flatMap(([p, bits]) => (c.port_directions[p] === 'output' ? bits : []));
      const q = outs.map((b) => (typeof b === 'number' ? names.get(b) : undefined)).find((x) => x !== undefined) ?? c.type;
      for (const [p, bits] of ports) {
        if (c.port_directions[p] !== 'input') continue;
        for (const b of bits) if (typeof b === 'number') ends.push({ bit: b, what: `${q} (${c.type}.${p})` });
      }
    }
  }
  for (const [p, port] of Object.entries(m.ports)) {
    if (port.direction !== 'output') continue;
    port.bits.forEach((b, i) => typeof b === 'number' && ends.push({ bit: b, what: port.bits.length > 1 ? `${p}[${i}]` : p }));
  }
  return { names, driver, ends };
}

export interface LongestPath {
  /** Arrival at the end (≤ 0: no path through a cell). */
  readonly at: number;
  readonly start: string;
  readonly end: string;
  /** The cells' types, from the end back to the start. */
  readonly cells: readonly string[];
}

/**
 * The path that arrives last at an end. A bit a combinational cell drives arrives at the latest of
 * its inputs' arrivals plus `delay(cell, pin)` (undefined: no arc from that pin), plus
 * `after(cell)`; a loop through combinational cells ends where it closes (as yosys's ltp reports
 * it). Any other bit (a register's output, an input port) arrives at 0, or never if its name
 * matches `exclude`. Iterative: deep netlists.
 */
export function longestPath(g: CombGraph, exclude: RegExp, delay: (cell: CombCell, pin: string) => number | undefined, after: (cell: CombCell) => number): LongestPath | null {
  const { names, driver } = g;
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
      let best = 0;
      let from: number | null = null;
      for (const i of d.ins) {
        const arc = delay(d, i.pin);
        if (arc === undefined) continue;
        const a = (memo.get(i.bit)?.at ?? 0) + arc;
        if (from === null || a > best) {
          best = a;
          from = i.bit;
        }
      }
      memo.set(x, { at: best + after(d), from });
      visiting.delete(x);
      stack.pop();
    }
  };
  let worst: { at: number; end: CombGraph['ends'][number] } | null = null;
  for (const e of g.ends) {
    solve(e.bit);
    const at = memo.get(e.bit)!.at;
    if (!worst || at > worst.at) worst = { at, end: e };
  }
  if (!worst) return null;
  const cells: string[] = [];
  let x: number | null = worst.end.bit;
  let start = x;
  while (x !== null && driver.has(x)) {
    cells.push(driver.get(x)!.type);
    start = memo.get(x)?.from ?? x;
    x = memo.get(x)?.from ?? null;
  }
  return { at: worst.at, start: names.get(start) ?? `bit ${start}`, end: worst.end.what, cells };
}

/** LUT levels and all-cell depth of a module read with `readModule`. */
export function netlistDepth(m: YosysModule, exclude: RegExp = QUASI_STATIC): DepthReport {
  const g = combGraph(m, COMBINATIONAL);
  const lut = longestPath(g, exclude, () => 0, (c) => (LUT.test(c.type) ? 1 : 0));
  const all = longestPath(g, exclude, () => 0, () => 1);
  let critical: DepthReport['critical'] = null;
  if (lut && lut.at > 0) {
    const cells: Record<string, number> = {};
    for (const c of lut.cells) {
      const t = c.replace(/^LUT[1-6]$/, 'LUT');
      cells[t] = (cells[t] ?? 0) + 1;
    }
    critical = { start: lut.start, end: lut.end, cells };
  }
  return { lutLevels: Math.max(0, lut?.at ?? 0), allCells: Math.max(0, all?.at ?? 0), critical };
}
