import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { VCD_TIME_PER_CYCLE } from '../../sim/verilator/wrapper-gen';
import { counterBuild } from './fixtures';

describe('VCD on demand', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'rnic-vcd-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('a model built with trace writes a VCD, from the cycle it was asked for, with every port', () => {
    const model = SimModel.open(buildModel(counterBuild({ trace: true })));
    model.tick(20);
    const file = path.join(scratch, 'waves', 'counter.vcd');
    model.vcd(file);
    model.tick(5);
    model.close();
    const vcd = readFileSync(file, 'utf8');
    for (const port of ['clk', 'rst', 'count']) expect(vcd).toMatch(new RegExp(`\\$var wire +\\d+ \\S+ ${port}\\b`));
    const times = [...vcd.matchAll(/^#(\d+)$/gm)].map((m) => Number(m[1]));
    expect(times[0]).toBe(20 * VCD_TIME_PER_CYCLE);
    expect(times.length).toBe(2 * 5);
    expect(vcd).toContain('b00011001'); // count = 25 after the last edge
  });

  test('tracing can stop and start again into a new file', () => {
    const model = SimModel.open(buildModel(counterBuild({ trace: true })));
    const first = path.join(scratch, 'first.vcd');
    const second = path.join(scratch, 'second.vcd');
    model.vcd(first);
    model.tick(3);
    model.vcdOff();
    model.tick(10);
    model.vcd(second);
    model.tick(2);
    model.close();
    const stamps = (file: string): number[] => [...readFileSync(file, 'utf8').matchAll(/^#(\d+)$/gm)].map((m) => Number(m[1]));
    // Every half-cycle of three cycles, in picoseconds of the 250 MHz clock: 2 ns per phase.
    expect(stamps(first)).toEqual([0, 1, 2, 3, 4, 5].map((h) => (h * VCD_TIME_PER_CYCLE) / 2));
    expect(VCD_TIME_PER_CYCLE).toBe(4000);
    expect(stamps(second)[0]).toBe(13 * VCD_TIME_PER_CYCLE);
    expect(readFileSync(second, 'utf8')).toMatch(/\$var wire +8 \S+ count/);
  });

  test('a model built without trace refuses vcd() and says how to fix it', () => {
    const model = SimModel.open(buildModel(counterBuild()));
    expect(() => model.vcd(path.join(scratch, 'no.vcd'))).toThrow(/built without trace: true/);
    model.close();
  });
});
