import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildModel } from '../../sim/verilator/build';
import { SimModel, type PortHandle } from '../../sim/verilator/model';
import { COUNTER_WIDTH, counterBuild } from './fixtures';

const WRAP = 2 ** COUNTER_WIDTH;

describe('8-bit counter with synchronous reset', () => {
  let model: SimModel;
  let count: PortHandle;
  let rst: PortHandle;

  beforeAll(() => {
    model = SimModel.open(buildModel(counterBuild()));
    count = model.handle('count');
    rst = model.handle('rst');
  });
  afterAll(() => model?.close());

  const reset = (): void => {
    model.pokeNumber(rst, 1);
    model.tick(2);
    model.pokeNumber(rst, 0);
  };

  test('holds zero while reset is high and counts from zero after release', () => {
    model.pokeNumber(rst, 1);
    model.tick(5);
    expect(model.peekNumber(count)).toBe(0);
    model.pokeNumber(rst, 0);
    model.tick();
    expect(model.peekNumber(count)).toBe(1);
  });

  test('counts one per rising edge, and tick(n) is n single ticks', () => {
    reset();
    const start = model.cycles;
    for (let i = 1; i <= 10; i++) {
      model.tick();
      expect(model.peekNumber(count)).toBe(i);
    }
    model.tick(90);
    expect(model.peekNumber(count)).toBe(100);
    expect(model.cycles - start).toBe(100);
  });

  test('peekPre shows the value at the rising edge, peek the value after it', () => {
    reset();
    model.tick(7);
    expect(model.peekPreNumber(count)).toBe(6);
    expect(model.peekNumber(count)).toBe(7);
    expect(model.peekPre('count')).toBe(6n);
    expect(model.peek('count')).toBe(7n);
  });

  test('wraps modulo 2^8', () => {
    reset();
    model.tick(WRAP + 3);
    expect(model.peekNumber(count)).toBe(3);
  });

  test('eval settles without a clock edge', () => {
    reset();
    model.tick(4);
    const cycles = model.cycles;
    model.eval();
    model.eval();
    expect(model.peekNumber(count)).toBe(4);
    expect(model.cycles).toBe(cycles);
  });

  test('reset applied for one cycle takes effect at that rising edge', () => {
    reset();
    model.tick(9);
    model.pokeNumber(rst, 1);
    model.tick();
    expect(model.peekPreNumber(count)).toBe(9);
    expect(model.peekNumber(count)).toBe(0);
    model.pokeNumber(rst, 0);
  });
});
