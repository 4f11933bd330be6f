import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { AxisSink, AxisSource } from '../../sim/cocotb/axis';
import { buildModel, type CompiledModel } from '../../sim/verilator/build';
import { SimModel } from '../../sim/verilator/model';
import { counterBuild, passthroughBuild, skidRegisterBuild } from './fixtures';

describe('misuse of a model is a clear error naming the port', () => {
  let model: SimModel;
  let skid: CompiledModel;

  beforeAll(() => {
    model = SimModel.open(buildModel(passthroughBuild()));
    skid = buildModel(skidRegisterBuild());
  });
  afterAll(() => model?.close());

  test('an unknown port is an Error naming it and listing the real ones', () => {
    expect(() => model.poke('a_8', 1)).toThrow(/unknown port a_8 on wide_passthrough \(ports: clk, a_7/);
    expect(() => model.peek('nope')).toThrow(/unknown port nope/);
    expect(() => model.handle('')).toThrow(Error);
  });

  test('poking an output is an Error naming it', () => {
    expect(() => model.poke('y_7', 1)).toThrow(/port y_7 of wide_passthrough is an output/);
    expect(() => model.pokeNumber(model.handle('y_7'), 1)).toThrow(/port y_7 .* output/);
  });

  test('a value wider than the port is a RangeError naming the port', () => {
    expect(() => model.poke('a_7', 128)).toThrow(RangeError);
    expect(() => model.poke('a_7', 128)).toThrow(/port a_7 \(7 bits\)/);
    expect(() => model.poke('a_65', 1n << 65n)).toThrow(/port a_65 \(65 bits\)/);
    expect(() => model.poke('a_7', new Uint8Array([0x80]))).toThrow(/port a_7/);
    expect(() => model.poke('a_33', new Uint8Array(6))).toThrow(/port a_33/);
    expect(() => model.pokeNumber(model.handle('a_7'), 200)).toThrow(/port a_7 \(7 bits\)/);
    expect(() => model.poke('a_7', -1)).toThrow(RangeError);
    expect(() => model.poke('a_7', 1.5)).toThrow(RangeError);
    expect(() => model.poke('a_7', -1n)).toThrow(RangeError);
  });

  test('a rejected poke leaves the port unchanged', () => {
    model.poke('a_65', 5n);
    expect(() => model.poke('a_65', 1n << 70n)).toThrow(RangeError);
    model.eval();
    expect(model.peek('y_65')).toBe(5n);
  });

  test('number accessors refuse ports wider than 32 bits', () => {
    expect(() => model.peekNumber(model.handle('y_33'))).toThrow(/port y_33 is 33 bits/);
    expect(() => model.pokeNumber(model.handle('a_64'), 1)).toThrow(RangeError);
  });

  test('tick counts must be non-negative integers', () => {
    expect(() => model.tick(-1)).toThrow(RangeError);
    expect(() => model.tick(1.5)).toThrow(RangeError);
  });

  test('AXI-Stream drivers on the wrong side of the DUT say so', () => {
    const m = SimModel.open(skid);
    expect(() => new AxisSource(m, 'm_axis')).toThrow(/m_axis_tdata, but it is a DUT output/);
    expect(() => new AxisSink(m, 's_axis')).toThrow(/s_axis_tready, but it is a DUT output/);
    expect(() => new AxisSource(m, 'x_axis')).toThrow(/unknown port x_axis_tdata/);
    const source = new AxisSource(m, 's_axis');
    expect(() => source.send(new Uint8Array(0))).toThrow(RangeError);
    expect(() => source.send(new Uint8Array(1), 2)).toThrow(/s_axis_tuser \(1 bits\)/);
    expect(() => source.sendBeats([{ data: new Uint8Array(9) }])).toThrow(/9 octets, the interface carries 8/);
    m.close();
  });

  test('a closed model cannot be stepped', () => {
    const m = SimModel.open(buildModel(counterBuild()));
    m.close();
    m.close();
    expect(() => m.tick()).toThrow(/closed/);
    expect(() => m.eval()).toThrow(/closed/);
  });
});
