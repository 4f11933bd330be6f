import { describe, expect, test } from 'vitest';
import { buildModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { plusargEchoBuild } from './fixtures';

describe('plusargs: the simulator command line a model is opened with', () => {
  test('reach $value$plusargs and $test$plusargs in initial blocks, per model', () => {
    const compiled = buildModel(plusargEchoBuild());
    const none = SimModel.open(compiled);
    const some = SimModel.open(compiled, { plusargs: ['+VALUE=1234', '+FLAG'] });
    const other = SimModel.open(compiled, { plusargs: ['+VALUE=7'] });
    none.tick();
    some.tick();
    other.tick();
    expect([none.peekNumber(none.handle('value')), none.peekNumber(none.handle('flag'))]).toEqual([0, 0]);
    expect([some.peekNumber(some.handle('value')), some.peekNumber(some.handle('flag'))]).toEqual([1234, 1]);
    expect([other.peekNumber(other.handle('value')), other.peekNumber(other.handle('flag'))]).toEqual([7, 0]);
    for (const m of [none, some, other]) m.close();
  });

  test('a malformed plusarg is refused before the model starts', () => {
    const compiled = buildModel(plusargEchoBuild());
    expect(() => SimModel.open(compiled, { plusargs: ['VALUE=1'] })).toThrow(/plusarg "VALUE=1" is not of the form \+NAME/);
  });
});
