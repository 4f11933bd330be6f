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

export interface YosysCell {
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
export function netNames(m: YosysModule): Map<number, string> {
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

export function netlistDepth(netlistJson: string, top: string, exclude: RegExp = QUASI_STATIC): DepthReport {
  const m = readModule(netlistJson, top);
  const names = netNames(m);
  const driver = new Map<number, { type: string; ins: number[] }>();
  const ends: { bit: number; what: string }[] = [];
  for (const c of Object.values(m.cells)) {
    const ins: number[] = [];
    const outs: number[] = [];
    for (const [p, bits] of Object.entries(c.connections)) {
      for (const b of bits) if (typeof b === 'number') (c.port_directions[p] === 'output' ? outs : ins).push(b);
    }
    if (COMBINATIONAL.test(c.type)) {
      const cell = { type: c.type, ins };
      for (const b of outs) driver.set(b, cell);
    } else {
      const q = outs.map((b) => names.get(b)).find((x) => x !== undefined) ?? c.type;
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

  /** Arrival per bit under a weight, with the predecessor on the worst path; iterative (deep netlists). */
  const arrival = (weight: (type: string) => number) => {
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
        const pending = d.ins.filter((i) => !memo.has(i));
        if (pending.length && !visiting.has(x)) {
          visiting.add(x);
          stack.push(...pending);
          continue;
        }
        // A loop through combinational cells ends here (as yosys's ltp reports it).
        let best = 0;
        let from: number | null = null;
        for (const i of d.ins) {
          const a = memo.get(i)?.at ?? 0;
          if (from === null || a > best) {
            best = a;
            from = i;
          }
        }
        memo.set(x, { at: best + weight(d.type), from });
        visiting.delete(x);
        stack.pop();
      }
    };
    for (const e of ends) solve(e.bit);
    return memo;
  };
  const worst = (memo: Map<number, { at: number; from: number | null }>) => {
    let top: { at: number; end: (typeof ends)[number] } | null = null;
    for (const e of ends) {
      const at = memo.get(e.bit)?.at ?? 0;
      if (!top || at > top.at) top = { at, end: e };
    }
    return top;
  };
  const lut = arrival((t) => (LUT.test(t) ? 1 : 0));
  const all = arrival(() => 1);
  const wl = worst(lut);
  const wa = worst(all);
  let critical: DepthReport['critical'] = null;
  if (wl && wl.at > 0) {
    const cells: Record<string, number> = {};
    let x: number | null = wl.end.bit;
    let start = wl.end.bit;
    while (x !== null && driver.has(x)) {
      const t = driver.get(x)!.type.replace(/^LUT[1-6]$/, 'LUT');
      cells[t] = (cells[t] ?? 0) + 1;
      start = lut.get(x)?.from ?? x;
      x = lut.get(x)?.from ?? null;
    }
    critical = { start: names.get(start) ?? `bit ${start}`, end: wl.end.what, cells };
  }
  return { lutLevels: Math.max(0, wl?.at ?? 0), allCells: Math.max(0, wa?.at ?? 0), critical };
}
