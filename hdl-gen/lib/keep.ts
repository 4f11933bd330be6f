import { type Expr, cat, lit } from '../core/expr';
import type { ModuleBuilder } from '../core/module';
import type { Signal } from '../core/signal';

/**
 * Octets in a beat whose tkeep is a thermometer code 2^k − 1 (the lanes from 0 up, as a packet's
 * beats are packed): k from the top valid lane, a one-hot found by comparing neighbours and
 * OR-encoded, about two LUT levels at 64 lanes. A popcount (an adder tree over the lanes) gives
 * the same number for such a tkeep, several levels deeper.
 */
export function thermometerCount(m: ModuleBuilder, name: string, keep: Expr, doc: string): Signal {
  const W = keep.width;
  // The top valid lane i gives k = i + 1.
  const top = Array.from({ length: W }, (_, i) => (i === W - 1 ? keep.bit(i) : keep.bit(i).and(keep.bit(i + 1).not())));
  const bits: Expr[] = [];
  for (let b = 0; 1 << b <= W; b++) {
    const lanes = top.filter((_, i) => ((i + 1) >> b) & 1);
    bits.push(lanes.length ? lanes.reduce((a, x) => a.or(x)) : lit(1, 0));
  }
  return m.let(name, cat(...bits.reverse()), { doc });
}
