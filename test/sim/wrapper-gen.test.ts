import { describe, expect, test } from 'vitest';
import { parseXmlPorts } from '../../sim/verilator/module-ports';
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

  test('behind the sampled-inputs shim: its class, and the strobe raised in the low phase and lowered in the high one', () => {
    const shimmed = generateWrapper({ top: 'dut', ports, clock: 'clk', trace: false, sampled: { strobe: 'sim_sample', module: 'sim_dut' } });
    expect(shimmed).toContain('#include "Vsim_dut.h"');
    expect(shimmed).toMatch(/t\.clk = 0;\n\s*t\.sim_sample = 1;[^\n]*\n\s*t\.eval\(\);[\s\S]*t\.clk = 1;\n\s*t\.sim_sample = 0;\n\s*t\.eval\(\);/);
    expect(cpp).not.toContain('sim_sample');
  });

  test("reads the top's ports from Verilator's XML: widths from the dtype table, not a function's arguments", () => {
    const xml = `<netlist>
    <module loc="a" name="sub" origName="sub"><var loc="a" name="x" dtype_id="1" dir="input" pinIndex="1" vartype="logic"/></module>
    <module loc="a" name="dut" origName="dut" topModule="1">
      <var loc="a" name="clk" dtype_id="1" dir="input" pinIndex="1" vartype="logic" origName="clk"/>
      <var loc="a" name="q" dtype_id="2" dir="output" pinIndex="2" vartype="logic" origName="q"/>
      <var loc="a" name="w" dtype_id="3" dir="input" pinIndex="3" vartype="logic" origName="w"/>
      <func loc="a" name="f"><var loc="a" name="arg" dtype_id="2" dir="input" vartype="logic"/></func>
    </module>
    <typetable><basicdtype loc="a" id="1" name="logic"/><basicdtype loc="a" id="2" name="logic" left="40" right="0"/><basicdtype loc="a" id="3" name="logic" left="0" right="199"/></typetable>
    </netlist>`;
    expect(parseXmlPorts(xml, 'dut')).toEqual([
      { name: 'clk', direction: 'input', width: 1 },
      { name: 'q', direction: 'output', width: 41 },
      { name: 'w', direction: 'input', width: 200 },
    ]);
    expect(() => parseXmlPorts(xml, 'other')).toThrow(/no module other/);
  });
});
