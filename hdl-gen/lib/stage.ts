import { type Expr, mux } from '../core/expr';
import { HdlError } from '../core/location';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * Valid/ready streams inside a module, and the pipeline register between two stages (verilog-axis
 * `axis_register.v`): REG_TYPE 1, a plain register whose input ready is the output's ready passed
 * through, or REG_TYPE 2, a skid buffer whose input ready is itself a register, so no ready path
 * runs combinationally through a chain of stages. Both take a beat per cycle when nothing stalls.
 *
 * A stream's producer drives `valid` and `data` and reads `ready`; `ready` is a wire the consumer
 * drives (with `connect`, or by assigning it).
 */
export interface Stream {
  readonly valid: Expr;
  readonly data: Expr;
  readonly ready: Signal;
}

/** What a producer offers, before anyone has said whether it is taken. */
export interface Offer {
  readonly valid: Expr;
  readonly data: Expr;
}

/** An offer with the wire its consumer drives: `<name>_ready`. */
export function stream(m: ModuleBuilder, name: string, offer: Offer): Stream {
  return { valid: offer.valid, data: offer.data, ready: m.wire(`${name}_ready`, 1, { doc: `the consumer of ${name} takes its beat` }) };
}

/** The consumer side: `to` takes `from` (drives from.ready, returns the offer it sees). */
export function connect(m: ModuleBuilder, from: Stream, ready: Expr): Offer {
  if (ready.width !== 1) throw new HdlError('connect(): ready must be 1 bit');
  m.assign(from.ready, ready);
  return { valid: from.valid, data: from.data };
}

/** A handshake happens on the stream this cycle. */
export const fires = (s: Stream): Expr => s.valid.and(s.ready);

export interface RegisterOptions {
  /** true: a skid buffer (ready registered, REG_TYPE 2); false: ready passes through (REG_TYPE 1). */
  readonly skid: boolean;
  readonly doc?: string;
}

/**
 * A pipeline register `name` taking `input`: returns the ready to give the input's producer and
 * the registered output stream (`<name>_valid_reg`, `<name>_data_reg`; with a skid buffer also
 * `<name>_temp_*` and `<name>_in_ready_reg`). One cycle of latency; a beat per cycle.
 */
export function pipelineRegister(m: ModuleBuilder, name: string, input: Offer, opts: RegisterOptions): { readonly ready: Expr; readonly out: Stream } {
  const w = input.data.width;
  const doc = opts.doc ? ` (${opts.doc})` : '';
  const valid = m.reg(`${name}_valid`, 1, { reset: 0, doc: `${name} holds a beat${doc}` });
  const data = m.reg(`${name}_data`, w);
  const out = stream(m, `${name}_out`, { valid, data });
  if (!opts.skid) {
    const ready = m.let(`${name}_in_ready`, valid.not().or(out.ready), { doc: `${name} can take a beat this cycle` });
    m.sync(() => {
      m.when(ready, () => {
        m.set(valid, input.valid);
        m.when(input.valid, () => m.set(data, input.data));
      });
    });
    return { ready, out };
  }
  // The skid buffer: a second register catches the beat taken while the output stalls.
  const inReady = m.reg(`${name}_in_ready`, 1, { reset: 0, doc: `${name} takes a beat this cycle (registered)` });
  const tempValid = m.reg(`${name}_temp_valid`, 1, { reset: 0, doc: `${name} holds a skid beat` });
  const tempData = m.reg(`${name}_temp_data`, w);
  const early = m.let(`${name}_in_ready_early`, out.ready.or(tempValid.not().and(valid.not().or(input.valid.not()))));
  m.sync(() => {
    m.set(inReady, early);
    m.when(
      inReady,
      () => {
        m.when(
          out.ready.or(valid.not()),
          () => {
            m.set(valid, input.valid);
            m.set(data, input.data);
          },
          () => {
            m.set(tempValid, input.valid);
            m.set(tempData, input.data);
          },
        );
      },
      () => {
        m.when(out.ready, () => {
          m.set(valid, tempValid);
          m.set(data, tempData);
          m.set(tempValid, 0);
        });
      },
    );
  });
  return { ready: inReady, out };
}

/** `n` pipeline registers in a row (skid buffers where `skid`), named `<name>0` … */
export function pipeline(m: ModuleBuilder, name: string, input: Offer, n: number, opts: RegisterOptions): { readonly ready: Expr; readonly out: Stream } {
  if (!Number.isInteger(n) || n < 1) throw new HdlError(`pipeline '${name}' needs at least one register`);
  let first: Expr | null = null;
  let offer: Offer = input;
  let last: Stream | null = null;
  for (let i = 0; i < n; i++) {
    const r = pipelineRegister(m, `${name}${i}`, offer, opts);
    if (last) m.assign(last.ready, r.ready);
    first ??= r.ready;
    last = r.out;
    offer = r.out;
  }
  return { ready: first!, out: last! };
}

/** A stream that passes `input` when `enable`, and offers nothing otherwise (a gate, no register). */
export function gate(input: Offer, enable: Expr): Offer {
  return { valid: input.valid.and(enable), data: input.data };
}

/** Selects between two offers (one-hot by `sel`): a 2:1 mux of valid and data. */
export function choose(sel: Expr, a: Offer, b: Offer): Offer {
  return { valid: mux(sel, a.valid, b.valid), data: mux(sel, a.data, b.data) };
}
