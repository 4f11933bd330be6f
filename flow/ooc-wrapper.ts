import { FlowError } from './run-tool';
import { portBits, type Port } from './netlist-ports';

/**
 * The out-of-context wrapper: a top module with four pins at most (clock, reset, one serial
 * input, one output) around a module whose ports could never fit a package, so place-and-route
 * can time the module itself.
 *
 * - Every input bit of the module comes from a register of one serial-in shift chain, so the
 *   module's inputs are distinct, unknown values: yosys can neither merge nor constant-fold them.
 * - Every output bit goes into a register, and the output registers are XOR-reduced into the
 *   output pin: an XOR depends on every bit, so none of the module's logic is dead.
 * - The reduction is a pipelined tree of XOR_FANIN-input XORs, one register level per tree level:
 *   each stage is one iCE40 LUT4 between registers, so the wrapper never sets the critical path
 *   (a flat 257-input XOR would be five LUT levels, slower than many modules it wraps).
 * - The module's clock comes straight from the clock pin; its reset (if it has one) from a
 *   register on the reset pin, as a reset synchroniser would drive it in a real design.
 *
 * So every path through the module starts and ends at a register and nextpnr's Fmax for the
 * clock is the module's register-to-register Fmax, including its input-to-register and
 * register-to-output paths (which would otherwise be unconstrained pin paths).
 */

/** Inputs per XOR node: one iCE40 LUT4 computes a 4-input XOR. */
export const XOR_FANIN = 4;

/** The wrapper's own pins. */
export const OOC_PINS = Object.freeze({ clock: 'clk', reset: 'rst', serialIn: 'ooc_in', out: 'ooc_out' });

export interface OocWrapperOptions {
  top: string;
  ports: readonly Port[];
  /** The module's clock port, driven from the clock pin. */
  clock: string;
  /** The module's reset port, driven from a register on the reset pin (if the module has it). */
  reset: string;
}

export interface OocWrapper {
  /** Name of the wrapper module: `<top>_ooc`. */
  module: string;
  verilog: string;
  /** Flip-flops the wrapper itself adds (shift chain, output registers, XOR tree, reset register). */
  registers: number;
  pins: string[];
  inputBits: number;
  outputBits: number;
  hasClock: boolean;
  hasReset: boolean;
}

/** A Verilog identifier for `name` (escaped when yosys kept a non-simple name). */
function ident(name: string): string {
  return /^[A-Za-z_][A-Za-z0-9_$]*$/.test(name) ? name : `\\${name} `;
}

/** `vec[hi:lo]`, or `vec[lo]` for one bit. */
function slice(vec: string, lo: number, width: number): string {
  return width === 1 ? `${vec}[${lo}]` : `${vec}[${lo + width - 1}:${lo}]`;
}

/** Widths of the XOR tree's register levels, from OUT_BITS down to 1 (empty when OUT_BITS is 1). */
export function xorTreeLevels(outputBits: number): number[] {
  const levels: number[] = [];
  for (let w = outputBits; w > 1; ) {
    w = Math.ceil(w / XOR_FANIN);
    levels.push(w);
  }
  return levels;
}

function isSinglePortIn(ports: readonly Port[], name: string, role: string): boolean {
  const p = ports.find((q) => q.name === name);
  if (p === undefined) return false;
  if (p.direction !== 'input' || p.width !== 1) {
    throw new FlowError(`${role} port '${name}' must be a 1-bit input (it is a ${p.width}-bit ${p.direction})`);
  }
  return true;
}

export function oocWrapper(o: OocWrapperOptions): OocWrapper {
  const inout = o.ports.find((p) => p.direction === 'inout');
  if (inout) throw new FlowError(`the out-of-context wrapper cannot drive inout port '${inout.name}' of '${o.top}'`);
  const hasClock = isSinglePortIn(o.ports, o.clock, 'clock');
  const hasReset = isSinglePortIn(o.ports, o.reset, 'reset');
  const special = new Set([o.clock, o.reset]);
  const dataIn = o.ports.filter((p) => p.direction === 'input' && !special.has(p.name));
  const inputBits = portBits(dataIn, 'input');
  const outputBits = portBits(o.ports, 'output');
  if (outputBits === 0) {
    throw new FlowError(`'${o.top}' has no outputs: nothing is observable, so synthesis would remove all of its logic`);
  }
  const levels = xorTreeLevels(outputBits);
  const wrapperName = `${o.top}_ooc`;
  const P = OOC_PINS;

  const pins = [P.clock, ...(hasReset ? [P.reset] : []), ...(inputBits > 0 ? [P.serialIn] : []), P.out];
  const portDecls = pins.map((pin) => `    ${pin === P.out ? 'output' : 'input '} wire ${pin}`);

  const body: string[] = [];
  body.push(`    localparam IN_BITS = ${inputBits};  // data input bits of ${o.top} (clock and reset excluded)`);
  body.push(`    localparam OUT_BITS = ${outputBits};`);
  body.push(`    localparam XOR_FANIN = ${XOR_FANIN};  // inputs per XOR node: one iCE40 LUT4`);
  body.push('');
  if (hasReset) {
    body.push('    // The reset reaches the module through a register, as from a reset synchroniser.');
    body.push('    reg rst_reg;');
    body.push(`    always @(posedge ${P.clock}) begin`);
    body.push(`        rst_reg <= ${P.reset};`);
    body.push('    end');
    body.push('');
  }
  if (inputBits > 0) {
    const next = inputBits === 1 ? P.serialIn : `{in_chain_reg[IN_BITS-2:0], ${P.serialIn}}`;
    body.push('    // Serial-in shift chain: one register per module input bit.');
    body.push('    reg [IN_BITS-1:0] in_chain_reg;');
    body.push(`    always @(posedge ${P.clock}) begin`);
    body.push(`        in_chain_reg <= ${next};`);
    body.push('    end');
    body.push('');
  }
  body.push('    // Every module output bit is registered, then XOR-reduced through a pipelined tree.');
  body.push('    wire [OUT_BITS-1:0] dut_out;');
  body.push('    reg  [OUT_BITS-1:0] out_reg;');
  body.push(`    always @(posedge ${P.clock}) begin`);
  body.push('        out_reg <= dut_out;');
  body.push('    end');
  if (levels.length > 0) body.push('', '    genvar i;');
  let prev = 'out_reg';
  let prevWidth = outputBits;
  levels.forEach((width, k) => {
    const lvl = k + 1;
    const pad = width * XOR_FANIN - prevWidth;
    const bits = `XOR${lvl}_BITS`;
    body.push('');
    body.push(`    localparam ${bits} = ${width};  // ceil(${prevWidth} / XOR_FANIN)`);
    body.push(`    wire [${bits}*XOR_FANIN-1:0] xor${lvl}_in = ${pad > 0 ? `{{${pad}{1'b0}}, ${prev}}` : prev};`);
    body.push(`    reg  [${bits}-1:0] xor${lvl}_reg;`);
    body.push('    generate');
    body.push(`        for (i = 0; i < ${bits}; i = i + 1) begin : g_xor${lvl}`);
    body.push(`            always @(posedge ${P.clock}) begin`);
    body.push(`                xor${lvl}_reg[i] <= ^xor${lvl}_in[i*XOR_FANIN +: XOR_FANIN];`);
    body.push('            end');
    body.push('        end');
    body.push('    endgenerate');
    prev = `xor${lvl}_reg`;
    prevWidth = width;
  });
  body.push('');
  body.push(`    assign ${P.out} = ${prev};`);
  body.push('');

  const conns: string[] = [];
  let inAt = 0;
  let outAt = 0;
  for (const p of o.ports) {
    let signal: string;
    if (hasClock && p.name === o.clock) signal = P.clock;
    else if (hasReset && p.name === o.reset) signal = 'rst_reg';
    else if (p.direction === 'input') {
      signal = slice('in_chain_reg', inAt, p.width);
      inAt += p.width;
    } else {
      signal = slice('dut_out', outAt, p.width);
      outAt += p.width;
    }
    conns.push(`        .${ident(p.name)}(${signal})`);
  }
  body.push(`    ${ident(o.top)} dut (`);
  body.push(conns.join(',\n'));
  body.push('    );');

  const registers = inputBits + outputBits + levels.reduce((a, b) => a + b, 0) + (hasReset ? 1 : 0);
  const verilog = [
    '`resetall',
    '`timescale 1ns / 1ps',
    '`default_nettype none',
    '',
    `// ${wrapperName}: out-of-context wrapper around ${o.top}, for place-and-route timing only.`,
    `// Generated by flow/ooc-wrapper.ts (rnic synth --module ${o.top} --target ice40).`,
    `// Inputs:  ${inputBits} bit(s) from a serial-in shift chain on ${P.serialIn}.`,
    `// Outputs: ${outputBits} bit(s) registered, then XOR-reduced by a pipelined tree onto ${P.out}.`,
    `// The wrapper adds ${registers} flip-flops.`,
    `module ${wrapperName} (`,
    portDecls.join(',\n'),
    ');',
    '',
    ...body,
    '',
    'endmodule',
    '',
    '`resetall',
    '',
  ].join('\n');
  return { module: wrapperName, verilog, registers, pins, inputBits, outputBits, hasClock, hasReset };
}
