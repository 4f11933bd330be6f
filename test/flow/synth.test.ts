import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { FlowError } from '../../flow/run-tool';
import { synthesize, type SynthOptions } from '../../flow/synth';

/**
 * The synthesis flow end to end on the real tools (yosys, nextpnr-ice40), on small fixtures so
 * the whole file stays well under a minute. Every test gets fresh work directories in a temporary
 * cache root, so nothing here reads a result left by an earlier run.
 */

const FIXTURES = fileURLToPath(new URL('../fixtures/synth/', import.meta.url));
const fixture = (name: string) => join(FIXTURES, name);
const cacheRoot = mkdtempSync(join(tmpdir(), 'rnic-synth-'));
afterAll(() => rmSync(cacheRoot, { recursive: true, force: true }));

const synth = (o: SynthOptions) => synthesize({ cacheRoot, ...o });

const COUNTER_BITS = 8;
/** The counter is small enough that every target should keep exactly one flip-flop per bit. */
const FF_TOLERANCE = 1;
/** An 8-bit counter on an HX8K routes at several hundred MHz; 50 MHz catches a broken measurement. */
const COUNTER_MIN_FMAX_MHZ = 50;
/** wide_xor_and: 2 × 256 input bits and 256 + 1 output bits. */
const WIDE_INPUT_BITS = 512;
const WIDE_OUTPUT_BITS = 257;
/** The XOR tree over 257 output registers: 65 + 17 + 5 + 2 + 1 registers. */
const WIDE_TREE_REGISTERS = 90;
/** User IO of the largest iCE40 HX package (CT256): the wide module's ports cannot fit it. */
const HX8K_CT256_USER_IO = 206;

describe('an 8-bit counter', () => {
  const counter = { top: 'counter8', sources: [fixture('counter8.v')] };

  test('ice40: LUTs and a carry chain, 8 flip-flops, and an Fmax above 50 MHz on the HX8K', () => {
    const r = synth({ ...counter, target: 'ice40' });
    expect(r.luts).toBeGreaterThan(0);
    expect(r.carries).toBeGreaterThan(0);
    expect(Math.abs(r.ffs! - COUNTER_BITS)).toBeLessThanOrEqual(FF_TOLERANCE);
    expect(r.fits).toBe(true);
    expect(r.fmaxMHz).toBeGreaterThan(COUNTER_MIN_FMAX_MHZ);
    expect(r.device).toBe('hx8k-ct256');
    expect(r.logicDepth).toBeGreaterThan(0);
    for (const file of ['yosys.log', 'yosys-ooc.log', 'nextpnr.log', 'counter8_ooc.v', 'out.asc']) {
      expect(existsSync(join(r.logDir, file))).toBe(true);
    }
  });

  test('ice40: the wrapper registers are counted apart from the module (1 input, rst, 8 outputs, 3 tree)', () => {
    const r = synth({ ...counter, target: 'ice40' });
    expect(r.wrapperRegisters).toBe(1 + 1 + COUNTER_BITS + 3);
    expect(r.ffs).toBe(COUNTER_BITS);
    expect(r.utilisation?.SB_IO?.used).toBe(4); // clk, rst, ooc_in, ooc_out
  });

  test('generic: gate cells, 8 flip-flops and a logic depth in gates', () => {
    const r = synth({ ...counter, target: 'generic' });
    expect(r.cells).toBeGreaterThan(COUNTER_BITS);
    expect(r.ffs).toBe(COUNTER_BITS);
    expect(Object.keys(r.cellTypes!).every((t) => t.startsWith('$_'))).toBe(true);
    expect(r.logicDepth).toBeGreaterThan(1);
    expect(r.fmaxMHz).toBeUndefined();
    expect(r.rams).toBeUndefined(); // generic synth maps memories to flip-flops
  });

  test('xilinx: exactly 8 flip-flops and the increment on CARRY4 cells', () => {
    const r = synth({ ...counter, target: 'xilinx' });
    expect(r.ffs).toBe(COUNTER_BITS);
    expect(r.carries).toBeGreaterThan(0);
    expect(r.cellTypes).not.toHaveProperty('IBUF'); // measured as a block: no IO buffers
    expect(r.logicDepth).toBeGreaterThan(0);
  });
});

describe('a wide module with 770 data port bits', () => {
  const wide = { top: 'wide_xor_and', sources: [fixture('wide_xor_and.v')] };

  test('places on the HX8K through the out-of-context wrapper and gets an Fmax', () => {
    expect(WIDE_INPUT_BITS + WIDE_OUTPUT_BITS).toBeGreaterThan(HX8K_CT256_USER_IO);
    const r = synth({ ...wide, target: 'ice40' });
    expect(r.fits).toBe(true);
    expect(r.fmaxMHz).toBeGreaterThan(0);
    expect(r.ffs).toBe(WIDE_OUTPUT_BITS); // the module's own registers, not the wrapper's
    expect(r.wrapperRegisters).toBe(WIDE_INPUT_BITS + WIDE_OUTPUT_BITS + WIDE_TREE_REGISTERS);
    expect(r.utilisation?.SB_IO?.used).toBe(3); // clk, ooc_in, ooc_out
    expect(r.utilisation?.ICESTORM_LC?.used).toBeGreaterThanOrEqual(r.luts!);
  });

  test('a part it does not fit gives fits false and nextpnr’s reason, not an exception', () => {
    const r = synth({ ...wide, target: 'ice40', device: 'hx1k' });
    expect(r.fits).toBe(false);
    expect(r.fmaxMHz).toBeNull();
    expect(r.luts).toBeGreaterThan(0); // synthesis numbers are still there
    expect(r.notes.join('\n')).toMatch(/does not fit hx1k-tq144: needs \d+ ICESTORM_LC, has 1280; ERROR: Unable to place/);
  });
});

describe('a 1024 x 16 memory with a registered read', () => {
  const RAM_VERILOG = [
    '`default_nettype none',
    'module ram1k16 (input wire clk, input wire we, input wire [9:0] waddr, input wire [9:0] raddr,',
    '                input wire [15:0] wdata, output reg [15:0] rdata);',
    'reg [15:0] mem [0:1023];',
    'always @(posedge clk) begin',
    '  if (we) mem[waddr] <= wdata;',
    '  rdata <= mem[raddr];',
    'end',
    'endmodule',
    '',
  ].join('\n');
  const ram = () => {
    const file = join(cacheRoot, 'ram1k16.v');
    writeFileSync(file, RAM_VERILOG);
    return { top: 'ram1k16', sources: [file] };
  };

  test('ice40: four 256 x 16 block RAMs, counted as rams and placed', () => {
    const r = synth({ ...ram(), target: 'ice40' });
    expect(r.rams).toBe(4);
    expect(r.utilisation?.ICESTORM_RAM?.used).toBe(4);
    expect(r.fits).toBe(true);
  });

  test('xilinx: one RAMB18E1, no distributed RAM', () => {
    const x = synth({ ...ram(), target: 'xilinx' });
    expect(x.rams).toBe(1);
    expect(x.cellTypes).toHaveProperty('RAMB18E1', 1);
    expect(x.lutRams).toBe(0);
  });
});

describe('a two-level hierarchy', () => {
  test('counts the cells of both submodule instances', () => {
    const r = synth({ top: 'hier_top', sources: [fixture('hier_top.v'), fixture('hier_leaf.v')], target: 'generic' });
    expect(r.ffs).toBe(2 * 4);
  });
});

describe('errors', () => {
  test('a missing top module is named in the error', () => {
    expect(() => synth({ top: 'no_such_module', sources: [fixture('counter8.v')], target: 'generic' })).toThrow(
      /top module 'no_such_module' not found in counter8\.v/,
    );
  });

  test('a yosys error comes back with the tail of its log', () => {
    let error: unknown;
    try {
      synth({ top: 'syntax_error', sources: [fixture('syntax_error.v')], target: 'generic' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FlowError);
    const f = error as FlowError;
    expect(f.message).toMatch(/yosys failed on syntax_error\.v: .*syntax error/);
    expect(f.logTail).toMatch(/syntax_error\.v:\d+: ERROR: syntax error/);
    expect(readFileSync(f.logFile!, 'utf8')).toContain(f.logTail.split('\n').at(-1));
  });

  test('a submodule missing from the sources is a yosys error naming it', () => {
    expect(() => synth({ top: 'hier_top', sources: [fixture('hier_top.v')], target: 'generic' })).toThrow(/hier_leaf/);
  });

  test('a missing source file is named before any tool runs', () => {
    expect(() => synth({ top: 'x', sources: [fixture('nope.v')], target: 'generic' })).toThrow(/source not found: .*nope\.v/);
  });
});

describe('the result cache', () => {
  test('the same sources and options reuse the result; fresh runs the tools again', () => {
    const o = { top: 'counter8', sources: [fixture('counter8.v')], target: 'generic' } as const;
    const first = synth({ ...o, fresh: true });
    const again = synth(o);
    expect(again.cached).toBe(true);
    expect(again).toEqual({ ...first, cached: true });
    expect(synth({ ...o, fresh: true }).cached).toBeUndefined();
  });

  test('a changed source or option gets its own work directory', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rnic-synth-src-'));
    try {
      const src = join(dir, 'counter8.v');
      copyFileSync(fixture('counter8.v'), src);
      const before = synth({ top: 'counter8', sources: [src], target: 'generic' });
      expect(synth({ top: 'counter8', sources: [src], target: 'generic', clock: 'other_clk' }).logDir).not.toBe(before.logDir);
      writeFileSync(src, readFileSync(src, 'utf8') + '// an edit that changes only the bytes\n');
      const after = synth({ top: 'counter8', sources: [src], target: 'generic' });
      expect(after.cached).toBeUndefined();
      expect(after.logDir).not.toBe(before.logDir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
