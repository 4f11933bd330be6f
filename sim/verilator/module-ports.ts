/**
 * Reads the ports of the top module as Verilator elaborated it (`verilator --xml-only`) and
 * compares them with the port list the caller gave, so a wrong name, width or direction is a clear
 * error naming the port, before any C++ is compiled and before the sampled-inputs shim (built from
 * the list) could hide it.
 */
import type { PortDirection, PortSpec } from './port-spec';

export interface ModulePort {
  readonly name: string;
  readonly direction: PortDirection | 'inout';
  readonly width: number;
}

const attribute = (tag: string, name: string): string | undefined => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1];

/**
 * The ports of `top` in Verilator's XML: the `<var … dir=…>` children of its `<module>` element,
 * their widths from the `<basicdtype>` table (`left`/`right`; none means one bit).
 */
export function parseXmlPorts(xml: string, top: string): ModulePort[] {
  const modules = [...xml.matchAll(/<module\b[^>]*>[\s\S]*?<\/module>/g)].map((m) => m[0]);
  const module = modules.find((m) => attribute(m.slice(0, m.indexOf('>')), 'name') === top);
  if (!module) throw new Error(`Verilator's XML has no module ${top}`);
  const widths = new Map<string, number>();
  for (const [tag] of xml.matchAll(/<basicdtype\b[^>]*>/g)) {
    const id = attribute(tag, 'id');
    const left = attribute(tag, 'left');
    const right = attribute(tag, 'right');
    if (id !== undefined) widths.set(id, left === undefined || right === undefined ? 1 : Math.abs(Number(left) - Number(right)) + 1);
  }
  const ports: ModulePort[] = [];
  // Ports carry a pinIndex; a function's arguments have a dir but no pinIndex.
  for (const [tag] of module.matchAll(/<var\b[^>]*\bpinIndex="[^"]*"[^>]*>/g)) {
    const dir = attribute(tag, 'dir');
    const name = attribute(tag, 'name');
    const width = widths.get(attribute(tag, 'dtype_id') ?? '');
    if (!name || width === undefined) throw new Error(`Verilator's XML: port ${name ?? '?'} of ${top} has no width`);
    ports.push({ name, direction: dir === 'input' ? 'input' : dir === 'output' ? 'output' : 'inout', width });
  }
  return ports;
}

/** Every difference between the generated ports and the listed ones, one line each. */
export function portMismatches(listed: readonly PortSpec[], generated: readonly ModulePort[]): string[] {
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
