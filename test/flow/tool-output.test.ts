import { describe, expect, test } from 'vitest';
import { clockFmax, nextpnrArgs, parseFmax, parseUtilisation } from '../../flow/nextpnr';
import { TARGET_PROFILES, classifyCells } from '../../flow/targets';
import { parseLtp, parseStatJson, synthScript, wrappedScript, yosysPath } from '../../flow/yosys';

/** The command lines this flow runs and the parsers for what the tools print, without running them. */

// Excerpts of a real nextpnr-ice40 0.4 log (counter8 in its wrapper on an HX8K).
const NEXTPNR_LOG = `Info: Device utilisation:
Info: 	         ICESTORM_LC:    25/ 7680     0%
Info: 	        ICESTORM_RAM:     0/   32     0%
Info: 	               SB_IO:     4/  256     1%

Info: Placed 4 cells based on constraints.
Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 402.58 MHz (PASS at 12.00 MHz)
Info: Routing..
Info: Max frequency for clock 'clk$SB_IO_IN_$glb_clk': 365.23 MHz (PASS at 12.00 MHz)
`;

describe('nextpnr log', () => {
  test('Fmax is the routed value: the last line for the clock, not the post-placement estimate', () => {
    const clocks = parseFmax(NEXTPNR_LOG);
    expect(clocks).toEqual({ 'clk$SB_IO_IN_$glb_clk': 365.23 });
    expect(clockFmax(clocks, 'clk')).toBe(365.23);
  });

  test('the clock is found by its pin name among several, or taken when it is the only one', () => {
    expect(clockFmax({ 'other$glb': 90, 'clk$SB_IO_IN_$glb_clk': 200 }, 'clk')).toBe(200);
    expect(clockFmax({ 'pll_out$glb': 90 }, 'clk')).toBe(90);
    expect(clockFmax({ a: 1, b: 2 }, 'clk')).toBeNull();
    expect(clockFmax({}, 'clk')).toBeNull();
  });

  test('utilisation is read as used and available per bel type', () => {
    expect(parseUtilisation(NEXTPNR_LOG)).toEqual({
      ICESTORM_LC: { used: 25, total: 7680 },
      ICESTORM_RAM: { used: 0, total: 32 },
      SB_IO: { used: 4, total: 256 },
    });
    expect(parseUtilisation('ERROR: no netlist')).toEqual({});
  });

  test('the command line places on the HX8K CT256 at a 12 MHz target with a fixed seed', () => {
    expect(nextpnrArgs('hx8k', 'ooc.json', 'out.asc').join(' ')).toBe(
      '--hx8k --package ct256 --json ooc.json --asc out.asc --freq 12 --pcf-allow-unconstrained --timing-allow-fail --seed 1',
    );
  });
});

describe('yosys scripts and reports', () => {
  const outputs = { statJson: 'stat.json', ltpText: 'ltp.txt', netlistJson: 'netlist.json' };

  test.each([
    ['generic', 'synth -top m -flatten', 'ltp -noff'],
    ['ice40', 'synth_ice40 -top m', 'ltp -noff w:* t:SB_LUT4 t:SB_CARRY'],
    [
      'xilinx',
      [
        'synth_xilinx -top m -flatten -abc9 -noiopad -noclkbuf -run begin:prepare',
        'read_verilog -lib -overwrite bram_boxes.v',
        'synth_xilinx -top m -flatten -abc9 -noiopad -noclkbuf -run prepare:',
      ].join('\n'),
      'ltp -noff w:* t:LUT* t:INV t:CARRY* t:MUXF*'],
  ] as const)('the %s script flattens, counts cells with stat and measures depth with ltp', (target, synthCmd, ltpCmd) => {
    expect(synthScript({ top: 'm', sources: ['/a/m.v', '/b c/n.v'], target, outputs, depth: true }).split('\n')).toEqual([
      'read_verilog /a/m.v "/b c/n.v"',
      'hierarchy -check -top m',
      ...synthCmd.split('\n'),
      'tee -o stat.json stat -width -json -top m',
      `tee -o ltp.txt ${ltpCmd}`,
      'write_json netlist.json',
      '',
    ]);
  });

  test('the iCE40 wrapper is mapped around the module netlist, not around a second synthesis of the sources', () => {
    const script = wrappedScript({ moduleNetlist: 'netlist.json', wrapper: '/w/m_ooc.v', wrapperTop: 'm_ooc', outputs: { statJson: 'ooc-stat.json', netlistJson: 'ooc.json' } });
    expect(script.split('\n')).toEqual([
      'read_json netlist.json',
      'delete =A:blackbox',
      'read_verilog -lib +/ice40/cells_sim.v',
      'read_verilog /w/m_ooc.v',
      'hierarchy -check -top m_ooc',
      'synth_ice40 -top m_ooc',
      'tee -o ooc-stat.json stat -width -json -top m_ooc',
      'write_json ooc.json',
      '',
    ]);
  });

  test('a path yosys cannot quote is refused', () => {
    expect(() => yosysPath('/tmp/a"b.v')).toThrow(/cannot read a path/);
  });

  test('stat -json: the "design" totals cover the hierarchy under the top', () => {
    const stat = {
      modules: { '\\leaf': { num_cells: 3, num_cells_by_type: { $_DFF_P_: 3 } }, '\\top': { num_cells: 2, num_cells_by_type: { leaf: 2 } } },
      design: { num_cells: 6, num_cells_by_type: { $_DFF_P_: 6 } },
    };
    expect(parseStatJson(JSON.stringify(stat), 'top')).toEqual({ cells: 6, cellTypes: { $_DFF_P_: 6 } });
    expect(() => parseStatJson('{"modules":{}}', 'top')).toThrow(/no entry for module 'top'/);
  });

  test('ltp: depth is the path length in cells, 0 when there is no combinational cell', () => {
    expect(parseLtp('Longest topological path in counter8 (length=7):\n    0: \\count_reg [1]')).toBe(7);
    expect(parseLtp('Longest topological path in m (length=-1):')).toBe(0);
    expect(parseLtp('no report')).toBeUndefined();
  });
});

describe('cell classes', () => {
  test('block RAMs and distributed RAMs are counted apart from LUTs and flip-flops', () => {
    const xilinx = classifyCells(TARGET_PROFILES.xilinx, { LUT6: 3, INV: 1, FDRE: 4, CARRY4: 2, RAMB18E1: 2, RAMB36E1: 1, RAM32M: 5, RAM64X1D: 1, MUXF7: 1 });
    expect(xilinx).toEqual({ luts: 4, ffs: 4, carries: 2, rams: 3, lutRams: 6 });
    const ice40 = classifyCells(TARGET_PROFILES.ice40, { SB_LUT4: 9, SB_DFFER: 2, SB_CARRY: 1, SB_RAM40_4K: 3, SB_RAM40_4KNR: 1 });
    expect(ice40).toEqual({ luts: 9, ffs: 2, carries: 1, rams: 4 });
    // generic synth maps memories to flip-flops: no RAM count at all
    expect(classifyCells(TARGET_PROFILES.generic, { $_DFF_P_: 2, $_AND_: 1 })).toEqual({ luts: 0, ffs: 2, carries: 0 });
  });
});
