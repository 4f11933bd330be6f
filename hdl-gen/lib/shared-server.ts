import { type Expr, lit } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import { roundRobin } from './arbiter';

/**
 * N requesters sharing one pipelined server that takes a request every cycle and answers a fixed
 * number of cycles later without back-pressure (the STag table's lookup and invalidate ports): a
 * round-robin grant per request, and the granted index carried along the server's latency, so
 * each answer goes back to the requester that asked. A requester waits at its ready while another
 * is served; its request fields must hold until then (AXI4-Stream rules).
 *
 * Use: drive the server with `valid` and `pick(...)`, give requester i `ready(i)`, and route the
 * server's answer with `answer(valid, i)` (the answer's other fields go to every requester).
 */
export interface SharedServer {
  /** A request goes to the server this cycle. */
  readonly valid: Expr;
  /** The granted requester's field (all of one width). */
  pick(fields: readonly Expr[]): Expr;
  /** Requester i's request is taken this cycle. */
  ready(i: number): Expr;
  /** The server's answer valid, as requester i sees it: only the answer to its own request. */
  answer(valid: Expr, i: number): Expr;
}

export function sharedServer(m: ModuleBuilder, name: string, valids: readonly Expr[], latency: number): SharedServer {
  if (!Number.isInteger(latency) || latency < 1) throw new RangeError(`shared server '${name}': latency must be a positive whole number of cycles, got ${latency}`);
  const arb = roundRobin(m, `${name}_arb`, valids);
  const n = valids.length;
  if (n === 1) return { valid: arb.valid, pick: arb.pick, ready: () => lit(1, 1), answer: (v) => v };
  const bits = Math.ceil(Math.log2(n));
  // tag k: the requester of the request taken k cycles ago (its answer comes out at k = latency).
  const tags = Array.from({ length: latency }, (_, k) => m.reg(`${name}_tag${k + 1}`, bits, { doc: `the requester served ${k + 1} cycle${k ? 's' : ''} ago` }));
  m.sync(() => {
    arb.sync(arb.valid, lit(1, 1));
    tags.forEach((t, k) => m.set(t, k === 0 ? arb.index : tags[k - 1]!));
  });
  const owner = tags[latency - 1]!;
  return {
    valid: arb.valid,
    pick: arb.pick,
    ready: (i) => arb.sel(i),
    answer: (v, i) => v.and(owner.eq(lit(bits, i))),
  };
}
