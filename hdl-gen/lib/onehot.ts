import type { Expr } from '../core/expr';
import { HdlError } from '../core/location';

/**
 * A mux over cases whose selects are one-hot (at most one is 1), as an AND-OR: each value is
 * masked by its select and the masked values are ORed. A priority chain `mux(s0, v0, mux(s1, v1,
 * …))` puts the last select behind one mux level per case; the AND-OR puts every select behind the
 * same few (an OR tree of the cases, 3 LUT6 levels for up to 36), which is what the deep gearboxes
 * and shifters of a 64-octet datapath need to close timing.
 *
 * Contract: the caller guarantees that no two selects are 1 at once (the AND-OR would OR their
 * values where the chain gives the first). `otherwise` is the value when no select is 1; without
 * it the result is 0 then.
 */
export function oneHotMux(cases: readonly (readonly [select: Expr, value: Expr])[], otherwise?: Expr): Expr {
  if (cases.length === 0) {
    if (!otherwise) throw new HdlError('oneHotMux needs a case or a default');
    return otherwise;
  }
  const width = cases[0]![1].width;
  for (const [s, v] of cases) {
    if (s.width !== 1) throw new HdlError(`oneHotMux: a select is ${s.width} bits, not 1`);
    if (v.width !== width) throw new HdlError(`oneHotMux: values of ${width} and ${v.width} bits`);
  }
  if (otherwise && otherwise.width !== width) throw new HdlError(`oneHotMux: the default is ${otherwise.width} bits, the values ${width}`);
  const terms = cases.map(([s, v]) => s.repeat(width).and(v));
  if (otherwise) {
    const none = cases.slice(1).reduce<Expr>((acc, [s]) => acc.or(s), cases[0]![0]).not();
    terms.push(none.repeat(width).and(otherwise));
  }
  return balancedOr(terms);
}

/** The OR of terms as a balanced tree (the emitter keeps the grouping, so the depth is log2). */
function balancedOr(terms: readonly Expr[]): Expr {
  if (terms.length === 1) return terms[0]!;
  const half = terms.length >> 1;
  return balancedOr(terms.slice(0, half)).or(balancedOr(terms.slice(half)));
}

/**
 * A priority mux, `mux(s0, v0, mux(s1, v1, … otherwise))`, built as an AND-OR: case i is selected
 * when s_i is 1 and no earlier select is (each of those a balanced OR), so the depth grows with
 * log2 of the cases, not with their number. The first-failing-check chains of a receive path
 * (ddp_rx_ctl's Terminate codes) are the use.
 */
export function priorityMux(cases: readonly (readonly [select: Expr, value: Expr])[], otherwise?: Expr): Expr {
  const first = cases.map(([s, v], i) => [i === 0 ? s : s.and(anyOf(cases.slice(0, i).map((c) => c[0])).not()), v] as const);
  return oneHotMux(first, otherwise);
}

/** Some select is 1: a balanced OR. */
export function anyOf(selects: readonly Expr[]): Expr {
  if (selects.length === 0) throw new HdlError('anyOf needs a select');
  return balancedOr(selects);
}
