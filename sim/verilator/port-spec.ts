/**
 * The ports of a Verilated top module as the bridge sees them: a name, a direction and a width.
 * The same list drives the C++ wrapper generator, the shared-buffer layout and the TypeScript
 * accessors, so it is validated once, here.
 */

export type PortDirection = 'input' | 'output';

export interface PortSpec {
  readonly name: string;
  readonly direction: PortDirection;
  readonly width: number;
}

/** Verilator stores wide values as 32-bit `EData` words, least-significant word first. */
export const WORD_BITS = 32;
export const OCTET_BITS = 8;

/** How many 32-bit words a port of `width` bits occupies in the shared buffer. */
export const wordsFor = (width: number): number => Math.ceil(width / WORD_BITS);

/** How many octets `peekBytes` returns for a port of `width` bits. */
export const octetsFor = (width: number): number => Math.ceil(width / OCTET_BITS);

/**
 * The C++ member type Verilator 5 gives a port of this width (verilated_types.h: VL_IN8/16/…,
 * VL_IN64, VL_INW). The wrapper generator needs it to pick the copy code.
 */
export type VerilatorStorage = 'CData' | 'SData' | 'IData' | 'QData' | 'VlWide';

const CDATA_BITS = 8;
const SDATA_BITS = 16;
const IDATA_BITS = 32;
const QDATA_BITS = 64;

export function verilatorStorage(width: number): VerilatorStorage {
  if (width <= CDATA_BITS) return 'CData';
  if (width <= SDATA_BITS) return 'SData';
  if (width <= IDATA_BITS) return 'IData';
  if (width <= QDATA_BITS) return 'QData';
  return 'VlWide';
}

/** A Verilog simple identifier that is also a plain C++ member name (no escaped identifiers). */
const PORT_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks what the wrapper generator relies on: identifiers it can paste into C++, unique names,
 * positive integer widths, and a one-bit input clock that `tick()` can toggle.
 */
export function validatePorts(ports: readonly PortSpec[], clock: string): void {
  if (ports.length === 0) throw new Error('port list is empty: list the top module ports');
  const seen = new Set<string>();
  for (const p of ports) {
    if (!PORT_NAME.test(p.name)) throw new Error(`port name ${JSON.stringify(p.name)} is not a plain Verilog/C++ identifier`);
    if (seen.has(p.name)) throw new Error(`port ${p.name} is listed twice`);
    seen.add(p.name);
    if (p.direction !== 'input' && p.direction !== 'output') {
      throw new Error(`port ${p.name}: direction must be 'input' or 'output' (inout is not supported), got ${String(p.direction)}`);
    }
    if (!Number.isSafeInteger(p.width) || p.width < 1) throw new Error(`port ${p.name}: width must be a positive integer, got ${p.width}`);
  }
  const clk = ports.find((p) => p.name === clock);
  if (!clk) throw new Error(`clock port ${clock} is not in the port list (tick() toggles it); pass clock: '<name>' if it is called something else`);
  if (clk.direction !== 'input' || clk.width !== 1) throw new Error(`clock port ${clock} must be a 1-bit input`);
}
