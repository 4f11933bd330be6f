import { describe, expect, test } from 'vitest';
import { type Expr, lit, mux } from '../../hdl-gen/core/expr';
import { ModuleBuilder } from '../../hdl-gen/core/module';
import { anyOf, oneHotMux, priorityMux } from '../../hdl-gen/lib/onehot';
import { withSeed } from '../support/random';
import { IrEval } from './ir-eval';

const N = 5;
const W = 12;

/** A module with both forms over the same cases: a priority chain and the one-hot AND-OR. */
function both() {
  const m = new ModuleBuilder('onehot_vs_chain', 'oneHotMux against the priority chain it replaces.');
  const sel = m.input('sel', N);
  const vals = Array.from({ length: N }, (_, i) => m.input(`v${i}`, W));
  const dflt = m.input('dflt', W);
  const cases = vals.map((v, i) => [sel.bit(i), v] as const);
  m.assign(m.output('chain', W), cases.reduceRight<Expr>((acc, [s, v]) => mux(s, v, acc), dflt));
  m.assign(m.output('onehot', W), oneHotMux(cases, dflt));
  m.assign(m.output('onehot_zero', W), oneHotMux(cases));
  return m.build();
}

describe('oneHotMux (hdl-gen/lib/onehot.ts)', () => {
  test('equals the priority chain whenever at most one select is 1; 0 with no default and no select', () =>
    withSeed(0x0e407, (r) => {
      const sim = new IrEval(both());
      for (let t = 0; t < 500; t++) {
        const hot = r.int(-1, N - 1); // -1: no select
        sim.setInput('sel', hot < 0 ? 0 : 1 << hot);
        for (let i = 0; i < N; i++) sim.setInput(`v${i}`, r.int(0, (1 << W) - 1));
        sim.setInput('dflt', r.int(0, (1 << W) - 1));
        expect(sim.get('onehot')).toBe(sim.get('chain'));
        expect(sim.get('onehot_zero')).toBe(hot < 0 ? 0n : sim.get('chain'));
      }
    }));

  test('selects of one bit and values of one width, or an error at the generator line', () => {
    const m = new ModuleBuilder('onehot_bad', 'widths');
    const a = m.input('a', 8);
    const s = m.input('s', 2);
    expect(() => oneHotMux([[s, a]])).toThrow(/a select is 2 bits, not 1/);
    expect(() => oneHotMux([[s.bit(0), a], [s.bit(1), lit(4, 0)]])).toThrow(/values of 8 and 4 bits/);
    expect(() => oneHotMux([[s.bit(0), a]], lit(4, 0))).toThrow(/the default is 4 bits, the values 8/);
    expect(() => oneHotMux([])).toThrow(/needs a case or a default/);
  });
});

describe('priorityMux and anyOf (hdl-gen/lib/onehot.ts)', () => {
  test('priorityMux equals the priority chain for every select pattern; anyOf is their OR', () =>
    withSeed(0x9a1e, (r) => {
      const m = new ModuleBuilder('priority_vs_chain', 'priorityMux against the priority chain it replaces.');
      const sel = m.input('sel', N);
      const vals = Array.from({ length: N }, (_, i) => m.input(`v${i}`, W));
      const dflt = m.input('dflt', W);
      const cases = vals.map((v, i) => [sel.bit(i), v] as const);
      m.assign(m.output('chain', W), cases.reduceRight<Expr>((acc, [s, v]) => mux(s, v, acc), dflt));
      m.assign(m.output('priority', W), priorityMux(cases, dflt));
      m.assign(m.output('any', 1), anyOf(cases.map(([s]) => s)));
      const sim = new IrEval(m.build());
      for (let pattern = 0; pattern < 1 << N; pattern++) {
        sim.setInput('sel', pattern);
        for (let i = 0; i < N; i++) sim.setInput(`v${i}`, r.int(0, (1 << W) - 1));
        sim.setInput('dflt', r.int(0, (1 << W) - 1));
        expect(sim.get('priority'), `sel ${pattern.toString(2)}`).toBe(sim.get('chain'));
        expect(sim.get('any')).toBe(pattern ? 1n : 0n);
      }
    }));

  test('anyOf of nothing is an error', () => {
    expect(() => anyOf([])).toThrow(/anyOf needs a select/);
  });
});
