import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { VCD_TIME_PER_CYCLE } from '../../sim/verilator/wrapper-gen';
import { counterBuild } from './fixtures';

describe('waveforms on demand: VCD and FST, whole or a window of cycles', () => {
  const scratch = mkdtempSync(path.join(tmpdir(), 'rnic-vcd-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('a model built with trace writes a VCD, from the cycle it was asked for, with every port', () => {
    const model = SimModel.open(buildModel(counterBuild({ trace: true })));
    model.tick(20);
    const file = path.join(scratch, 'waves', 'counter.vcd');
    model.waveform(file);
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
    model.waveform(first);
    model.tick(3);
    model.waveformOff();
    model.tick(10);
    model.waveform(second);
    model.tick(2);
    model.close();
    const stamps = (file: string): number[] => [...readFileSync(file, 'utf8').matchAll(/^#(\d+)$/gm)].map((m) => Number(m[1]));
    // Every half-cycle of three cycles, in picoseconds of the 250 MHz clock: 2 ns per phase.
    expect(stamps(first)).toEqual([0, 1, 2, 3, 4, 5].map((h) => (h * VCD_TIME_PER_CYCLE) / 2));
    expect(VCD_TIME_PER_CYCLE).toBe(4000);
    expect(stamps(second)[0]).toBe(13 * VCD_TIME_PER_CYCLE);
    expect(readFileSync(second, 'utf8')).toMatch(/\$var wire +8 \S+ count/);
  });

  const stampsOf = (vcd: string): number[] => [...vcd.matchAll(/^#(\d+)$/gm)].map((m) => Number(m[1]));

  test('a window dumps only its cycles [from, to), then closes the file', () => {
    const model = SimModel.open(buildModel(counterBuild({ trace: true })));
    const file = path.join(scratch, 'window.vcd');
    model.waveform(file, { from: 7, to: 10 });
    model.tick(25);
    const stamps = stampsOf(readFileSync(file, 'utf8')); // closed at cycle 10, before close()
    model.close();
    expect(stamps).toEqual([7, 7.5, 8, 8.5, 9, 9.5].map((c) => c * VCD_TIME_PER_CYCLE));
  });

  test('an FST model writes FST, which GTKWave reads back (fst2vcd), windowed the same way', () => {
    const compiled = buildModel(counterBuild({ trace: 'fst' }));
    expect(compiled.trace).toBe('fst');
    const model = SimModel.open(compiled);
    expect(() => model.waveform(path.join(scratch, 'wrong.vcd'))).toThrow(/writes FST, so the file must end in \.fst/);
    const file = path.join(scratch, 'counter.fst');
    model.waveform(file, { from: 4, to: 12 });
    model.tick(30);
    model.close();
    expect(readFileSync(file).subarray(0, 1)[0]).toBe(0); // FST_BL_HDR: not a text VCD
    const back = spawnSync('fst2vcd', [file], { encoding: 'utf8' });
    expect(back.status, back.stderr).toBe(0);
    expect(back.stdout).toMatch(/\$var wire +8 \S+ count/);
    expect(back.stdout).toMatch(/\$timescale\s+1ps\s+\$end/);
    const stamps = stampsOf(back.stdout);
    expect(stamps[0]).toBe(4 * VCD_TIME_PER_CYCLE);
    expect(stamps[stamps.length - 1]).toBe(11.5 * VCD_TIME_PER_CYCLE);
  });

  test('a model built without trace refuses vcd() and says how to fix it', () => {
    const model = SimModel.open(buildModel(counterBuild()));
    expect(() => model.waveform(path.join(scratch, 'no.vcd'))).toThrow(/built without trace: true/);
    model.close();
  });
});
