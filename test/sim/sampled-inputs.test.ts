import { beforeAll, describe, expect, test } from 'vitest';
import { buildModel, type CompiledModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { SAMPLE_STROBE, sampledInputsModule, sampledTopName } from '../../sim/verilator/sampled-inputs';
import { hex, withSeed, type Rng } from '../support/random';
import { skidRegisterBuild } from './fixtures';

const CYCLES = 3000;

describe('the sampled-inputs shim', () => {
  test('registers every input but the clock on the strobe and passes the clock and outputs straight', () => {
    const text = sampledInputsModule('dut', [
      { name: 'clk', direction: 'input', width: 1 },
      { name: 'a', direction: 'input', width: 33 },
      { name: 'y', direction: 'output', width: 8 },
    ], 'clk');
    expect(text).toContain(`module ${sampledTopName('dut')} (`);
    expect(text).toContain(`input wire ${SAMPLE_STROBE}`);
    expect(text).toContain(`always @(posedge ${SAMPLE_STROBE}) a_sampled <= a;`);
    expect(text).not.toContain('clk_sampled');
    expect(text).toMatch(/\.clk\(clk\)[\s\S]*\.a\(a_sampled\)[\s\S]*\.y\(y\)/);
    expect(() => sampledInputsModule('dut', [
      { name: 'clk', direction: 'input', width: 1 },
      { name: 'a', direction: 'input', width: 1 },
      { name: 'a_sampled', direction: 'input', width: 1 },
    ], 'clk')).toThrow(/ports a and a_sampled/);
  });

  describe('behind the shim, a model is cycle for cycle the model without it', () => {
    let plain: CompiledModel;
    let sampled: CompiledModel;
    beforeAll(() => {
      plain = buildModel(skidRegisterBuild({ sampledInputs: false }));
      sampled = buildModel(skidRegisterBuild());
    });

    /** The same random value on every input but the clock of both models; reset now and then. */
    const pokeRandom = (models: readonly SimModel[], cycle: number, r: Rng): void => {
      for (const p of plain.ports) {
        if (p.direction !== 'input' || p.name === 'clk') continue;
        const value = p.name === 'rst' ? (cycle < 3 || r.bool(0.01) ? 1n : 0n) : BigInt(`0x${hex(r.bytes(Math.ceil(p.width / 8)))}`) & ((1n << BigInt(p.width)) - 1n);
        for (const m of models) m.poke(p.name, value);
      }
    };

    test('random inputs every cycle (reset, valid, ready, data): every output equal before and after each edge', () => {
      expect(plain.sampledInputs).toBe(false);
      expect(sampled.sampledInputs).toBe(true);
      const models = [SimModel.open(plain), SimModel.open(sampled)] as const;
      try {
        const outputs = plain.ports.filter((p) => p.direction === 'output');
        withSeed(0x5a3, (r) => {
          for (let cycle = 0; cycle < CYCLES; cycle++) {
            pokeRandom(models, cycle, r);
            for (const m of models) m.tick();
            for (const p of outputs) {
              expect(models[1].peekPre(p.name), `${p.name} at the edge of cycle ${cycle}`).toBe(models[0].peekPre(p.name));
              expect(models[1].peek(p.name), `${p.name} after the edge of cycle ${cycle}`).toBe(models[0].peek(p.name));
            }
          }
        });
      } finally {
        for (const m of models) m.close();
      }
    });

    test('deferred edges: runs of ticks read only before the edge, tick(n), and a read after the edge now and then', () => {
      const models = [SimModel.open(plain), SimModel.open(sampled)] as const;
      try {
        const outputs = plain.ports.filter((p) => p.direction === 'output');
        let commits = 0;
        withSeed(0x7e1, (r) => {
          for (let cycle = 0; cycle < CYCLES; ) {
            pokeRandom(models, cycle, r);
            const n = r.bool(0.1) ? r.int(2, 5) : 1;
            for (const m of models) m.tick(n);
            cycle += n;
            expect(models[1].cycles).toBe(models[0].cycles);
            for (const p of outputs) expect(models[1].peekPre(p.name), `${p.name} at the edge of cycle ${cycle}`).toBe(models[0].peekPre(p.name));
            if (r.bool(0.05)) {
              commits++;
              for (const p of outputs) expect(models[1].peek(p.name), `${p.name} after the edge of cycle ${cycle}`).toBe(models[0].peek(p.name));
            }
          }
        });
        expect(commits).toBeGreaterThan(10);
      } finally {
        for (const m of models) m.close();
      }
    });
  });
});
