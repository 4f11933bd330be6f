import { parseArgs } from 'node:util';
import { diffTraces, formatDiff } from '../sim/cosim/trace-diff';
import { TraceError, readTrace } from '../sim/cosim/trace';
import { toNumber } from './cosim-command';
import { UsageError } from './scenario-cli';

/**
 * `rnic diff A B`: the first divergence of two transaction traces (`rnic cosim --trace-dir`, or
 * the pair a failing run leaves in its --out): model against RTL, or two runs. Exit status 0 when
 * they agree, 1 at a divergence.
 */
export function diffCommand(argv: readonly string[], out: (s: string) => void): number {
  const { values, positionals } = parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: true,
    options: { cycles: { type: 'boolean' }, context: { type: 'string' }, json: { type: 'boolean' } },
  });
  if (positionals.length !== 2) throw new UsageError(`two trace files are needed (A B), got ${positionals.length}${positionals.length ? `: ${positionals.join(' ')}` : ''}`);
  const [fa, fb] = positionals as [string, string];
  const context = toNumber(values.context ?? '3');
  if (!Number.isInteger(context) || context < 0) throw new UsageError(`--context must be a number of records (0 or more), got ${values.context}`);
  let a, b;
  try {
    a = readTrace(fa);
    b = readTrace(fb);
  } catch (e) {
    if (e instanceof TraceError) throw new UsageError(e.message);
    throw e;
  }
  const d = diffTraces(a, b, { cycles: values.cycles ?? false, context });
  // The traces' sides (their meta line) label the columns; two runs of one side are A and B.
  const side = (t: typeof a) => t.find((x) => x.r.t === 'meta')?.r as { side?: string } | undefined;
  const [sa, sb] = [side(a)?.side, side(b)?.side];
  const labels = sa && sb && sa !== sb ? { a: sa, b: sb } : { a: 'A', b: 'B' };
  out(values.json ? JSON.stringify(d) : formatDiff(d, { a: fa, b: fb }, labels));
  return d.first ? 1 : 0;
}
