import { describe, expect, test } from 'vitest';
import { parseHeaderPorts } from '../../sim/verilator/header-ports';
import { layoutPorts } from '../../sim/verilator/layout';
import type { PortSpec } from '../../sim/verilator/port-spec';
import { generateWrapper } from '../../sim/verilator/wrapper-gen';

const ports: PortSpec[] = [
  { name: 'clk', direction: 'input', width: 1 },
  { name: 'a', direction: 'input', width: 33 },
  { name: 'b', direction: 'input', width: 65 },
  { name: 'y', direction: 'output', width: 65 },
  { name: 'z', direction: 'output', width: 12 },
];

describe('C++ wrapper generator', () => {
  const cpp = generateWrapper({ top: 'dut', ports, clock: 'clk', trace: false });

  test('lays out inputs then outputs, each area once now and once pre-edge', () => {
    const layout = layoutPorts(ports);
    expect(layout.slots.map((s) => [s.name, s.offset, s.preOffset])).toEqual([
      ['clk', 4, 14], ['a', 5, 15], ['b', 7, 17], ['y', 10, 20], ['z', 13, 23],
    ]);
    expect(layout.inputWords).toBe(6);
    expect(layout.totalWords).toBe(24);
  });

  test('copies each storage class with the matching Verilator accessor and masks inputs', () => {
    expect(cpp).toContain('t.clk = static_cast<CData>((w[4] & 0x00000001u));');
    expect(cpp).toContain('t.a = (static_cast<QData>((w[6] & 0x00000001u)) << 32) | static_cast<QData>(w[5]);');
    expect(cpp).toContain('t.b.at(0) = w[7];');
    expect(cpp).toContain('t.b.at(2) = (w[9] & 0x00000001u);');
    expect(cpp).toContain('w[12] = t.y.at(2);');
    expect(cpp).toContain('w[22] = t.y.at(2);');
    expect(cpp).toContain('w[13] = static_cast<uint32_t>(t.z);');
  });

  test('is deterministic and leaves VCD support out unless asked', () => {
    expect(generateWrapper({ top: 'dut', ports, clock: 'clk', trace: false })).toBe(cpp);
    expect(cpp).not.toContain('verilated_vcd_c.h');
    expect(generateWrapper({ top: 'dut', ports, clock: 'clk', trace: true })).toContain('verilated_vcd_c.h');
  });

  test('reads the ports Verilator declared in V<top>.h', () => {
    const header = '    VL_IN8(&clk,0,0);\n    VL_OUT64(&q,40,0);\n    VL_INW(&w,199,0,7);\n    VL_OUT(&r,31,0);\n';
    expect(parseHeaderPorts(header)).toEqual([
      { name: 'clk', direction: 'input', width: 1 },
      { name: 'q', direction: 'output', width: 41 },
      { name: 'w', direction: 'input', width: 200 },
      { name: 'r', direction: 'output', width: 32 },
    ]);
  });
});
