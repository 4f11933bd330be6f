import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import type { Port } from '../../flow/netlist-ports';
import { OOC_PINS, oocWrapper, xorTreeLevels } from '../../flow/ooc-wrapper';

/** The out-of-context wrapper's structure, checked without synthesis (synth.test.ts places it). */

const FIXTURES = fileURLToPath(new URL('../fixtures/synth/', import.meta.url));
const port = (name: string, direction: Port['direction'], width = 1): Port => ({ name, direction, width });
const COUNTER_PORTS = [port('clk', 'input'), port('rst', 'input'), port('en', 'input'), port('count', 'output', 8)];
const wrap = (top: string, ports: Port[]) => oocWrapper({ top, ports, clock: 'clk', reset: 'rst' });

describe('out-of-context wrapper', () => {
  test('the XOR tree has one register level per 4:1 reduction, down to one bit', () => {
    expect(xorTreeLevels(257)).toEqual([65, 17, 5, 2, 1]);
    expect(xorTreeLevels(4)).toEqual([1]);
    expect(xorTreeLevels(1)).toEqual([]);
  });

  test('counts its own registers: input chain, output registers, tree, reset register', () => {
    const w = wrap('counter8', COUNTER_PORTS);
    expect(w).toMatchObject({ module: 'counter8_ooc', inputBits: 1, outputBits: 8, registers: 1 + 8 + 2 + 1 + 1, hasClock: true, hasReset: true });
    expect(w.pins).toEqual([OOC_PINS.clock, OOC_PINS.reset, OOC_PINS.serialIn, OOC_PINS.out]);
    expect(w.verilog).toContain('.clk(clk)');
    expect(w.verilog).toContain('.rst(rst_reg)');
  });

  test('a module without data inputs gets no serial-in pin; one output bit needs no tree', () => {
    const w = wrap('free_run', [port('clk', 'input'), port('q', 'output')]);
    expect(w.pins).toEqual([OOC_PINS.clock, OOC_PINS.out]);
    expect(w.registers).toBe(1);
    expect(w.verilog).not.toContain('in_chain_reg');
  });

  test('refuses what it cannot wrap: inout ports, no outputs, a clock that is not one bit in', () => {
    expect(() => wrap('m', [port('clk', 'input'), port('pad', 'inout'), port('q', 'output')])).toThrow(/inout port 'pad'/);
    expect(() => wrap('m', [port('clk', 'input'), port('a', 'input')])).toThrow(/no outputs/);
    expect(() => wrap('m', [port('clk', 'input', 2), port('q', 'output')])).toThrow(/clock port 'clk' must be a 1-bit input/);
  });

  test('the generated Verilog is lint-clean (verilator -Wall) around the counter', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rnic-ooc-'));
    try {
      const w = wrap('counter8', COUNTER_PORTS);
      const file = join(dir, `${w.module}.v`);
      writeFileSync(file, w.verilog);
      const lint = spawnSync('verilator', ['--lint-only', '-Wall', '--top-module', w.module, file, join(FIXTURES, 'counter8.v')], { encoding: 'utf8' });
      expect(lint.stderr).toBe('');
      expect(lint.status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
