import { type Expr } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';
import { enumConstants } from './ports';

/**
 * A state machine with named states (Amaranth's `m.FSM`, verilog-ethernet's `localparam STATE_*`):
 * the states are localparams `<NAME>_<STATE>` of the module, the state register `<name>_reg` is
 * compared and assigned by name, and `cases` emits `case (<name>_reg) <NAME>_<STATE>: …`. No state
 * number is written by hand.
 */
export interface StateMachine<S extends string> {
  /** The state register. */
  readonly state: Signal;
  /** The named constant of a state. */
  readonly value: (s: S) => Expr;
  /** 1 while in state `s`. */
  is(s: S): Expr;
  /** Inside sync(): the next state is `s`. */
  goto(s: S): void;
  /** Inside comb() or sync(): one branch per state (states left out do nothing). */
  cases(branches: { readonly [K in S]?: () => void }): void;
}

export function stateMachine<const S extends string>(m: ModuleBuilder, name: string, states: readonly S[], opts: { readonly reset: S; readonly doc?: string; /** What each state means, as the localparam's comment. */ readonly meaning?: { readonly [K in S]?: string } }): StateMachine<S> {
  if (states.length < 2) throw new HdlError(`state machine '${name}' needs at least two states`);
  if (new Set(states).size !== states.length) throw new HdlError(`state machine '${name}' names a state twice`);
  for (const s of states) if (!/^[A-Z][A-Z0-9_]*$/.test(s)) throw new HdlError(`state machine '${name}': state '${s}' must be UPPER_SNAKE_CASE`);
  const width = Math.max(1, Math.ceil(Math.log2(states.length)));
  const prefix = name.toUpperCase();
  const consts = enumConstants(m, prefix, width, Object.fromEntries(states.map((s, i) => [s, i])) as { [K in S]: number }, (s) => opts.meaning?.[s] ?? '');
  const value = (s: S): Expr => {
    if (!states.includes(s)) throw new HdlError(`state machine '${name}' has no state '${s}' (states: ${states.join(', ')})`);
    return consts[s];
  };
  const reset = states.indexOf(opts.reset);
  if (reset < 0) throw new HdlError(`state machine '${name}': reset state '${opts.reset}' is not one of its states`);
  const state = m.reg(name, width, { reset, doc: opts.doc ?? `state of ${name}: ${states.join(', ')}` });
  return {
    state,
    value,
    is: (s) => state.eq(value(s)),
    goto: (s) => m.set(state, value(s)),
    cases(branches) {
      const arms = states.filter((s) => branches[s]).map((s) => [value(s), branches[s]!] as const);
      m.switch(state, arms);
    },
  };
}
