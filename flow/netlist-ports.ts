import { FlowError } from './run-tool';

/**
 * The ports of a module as yosys resolved them (parameters applied, widths known), read from the
 * `write_json` netlist rather than from the Verilog text, so `parameter`-sized and `ANSI`/non-ANSI
 * port lists all come out the same.
 */

export type PortDirection = 'input' | 'output' | 'inout';

export interface Port {
  name: string;
  direction: PortDirection;
  width: number;
}

interface JsonNetlist {
  modules?: Record<string, { ports?: Record<string, { direction: PortDirection; bits: unknown[] }> }>;
}

/** Ports of `top` in declaration order (yosys writes them in that order). */
export function netlistPorts(netlistJson: string, top: string): Port[] {
  const netlist = JSON.parse(netlistJson) as JsonNetlist;
  const module = netlist.modules?.[top];
  if (module === undefined) throw new FlowError(`netlist has no module '${top}'`);
  return Object.entries(module.ports ?? {}).map(([name, p]) => ({ name, direction: p.direction, width: p.bits.length }));
}

/** Total bits of the ports in `direction`. */
export function portBits(ports: readonly Port[], direction: PortDirection): number {
  return ports.filter((p) => p.direction === direction).reduce((n, p) => n + p.width, 0);
}
