/**
 * Reads the ports Verilator actually generated (the VL_IN…/VL_OUT… declarations in V<top>.h)
 * and compares them with the port list the caller gave, so a wrong name, width or direction is
 * a clear error naming the port instead of a C++ compile error or an input silently held at 0.
 */
import type { PortDirection, PortSpec } from './port-spec';

/** `VL_IN8(&clk,0,0);`, `VL_OUT64(&q,63,0);`, `VL_INW(&a,199,0,7);` (verilated_types.h). */
const DECLARATION = /\bVL_(IN|OUT|INOUT)(?:8|16|64|W)?\(&?(\w+),(\d+),(\d+)(?:,\d+)?\);/g;

export interface HeaderPort {
  readonly name: string;
  readonly direction: PortDirection | 'inout';
  readonly width: number;
}

export function parseHeaderPorts(header: string): HeaderPort[] {
  const ports: HeaderPort[] = [];
  for (const m of header.matchAll(DECLARATION)) {
    const [, dir, name, msb, lsb] = m;
    if (!dir || !name || !msb || !lsb) continue;
    const direction = dir === 'IN' ? 'input' : dir === 'OUT' ? 'output' : 'inout';
    ports.push({ name, direction, width: Math.abs(Number(msb) - Number(lsb)) + 1 });
  }
  return ports;
}

/** Every difference between the generated ports and the listed ones, one line each. */
export function portMismatches(listed: readonly PortSpec[], generated: readonly HeaderPort[]): string[] {
  const problems: string[] = [];
  const byName = new Map(generated.map((p) => [p.name, p]));
  for (const p of listed) {
    const g = byName.get(p.name);
    if (!g) problems.push(`port ${p.name} is listed but the module has no such port`);
    else if (g.direction !== p.direction) problems.push(`port ${p.name} is listed as ${p.direction} but the module declares it ${g.direction}`);
    else if (g.width !== p.width) problems.push(`port ${p.name} is listed as ${p.width} bits but the module declares ${g.width}`);
  }
  const listedNames = new Set(listed.map((p) => p.name));
  for (const g of generated) {
    if (!listedNames.has(g.name)) problems.push(`module port ${g.name} (${g.direction}, ${g.width} bits) is missing from the port list`);
  }
  return problems;
}
