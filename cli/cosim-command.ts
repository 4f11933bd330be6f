import { parseArgs } from 'node:util';
import { blockReplay, failures, formatCosim, runCosim } from './cosim-cli';
import { formatRnicCosim, formatScenarioCosim, runRnicCosim, runScenarioCosim } from './rnic-cosim-cli';
import { UsageError } from './scenario-cli';

/** What one `rnic cosim` command found: whether it failed, and what it prints. */
export interface CosimOutcome {
  readonly failed: boolean;
  /** The text or JSON (--json) the command prints. */
  readonly output: string;
  /** The first difference or violation in one line (empty when none). */
  readonly first: string;
  readonly cycle: number | null;
}

export interface CosimEnvironment {
  readonly progress?: (done: number, total: number) => void;
  /** Plusargs added to the command's (a mutation campaign's live mutant). */
  readonly plusargs?: readonly string[];
  /** On a failure of the whole RNIC: pcaps and a traced replay (default true). */
  readonly evidence?: boolean;
}

const bigintJson = (v: unknown): string => JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `0x${x.toString(16)}` : x));

/** Decimal or 0x-prefixed; anything else becomes NaN, which the checks reject by name. */
export const toNumber = (s: string): number => (/^(0x[0-9a-f]+|\d+)$/i.test(s) ? Number(s) : Number.NaN);

/** `rnic cosim` (cli/main.ts) as a function: the regression and the mutation campaign run it in-process. */
export function cosimCommand(argv: readonly string[], env: CosimEnvironment = {}): CosimOutcome {
  const { values } = parseArgs({
    args: [...argv],
    strict: true,
    options: {
      dut: { type: 'string', default: 'rnic' },
      width: { type: 'string' },
      random: { type: 'boolean' },
      scenario: { type: 'string' },
      ops: { type: 'string', default: '1000' },
      config: { type: 'string' },
      trace: { type: 'boolean' },
      out: { type: 'string', default: 'out/cosim' },
      depth: { type: 'string' },
      seed: { type: 'string', default: '1' },
      frames: { type: 'string', default: '1000' },
      rtl: { type: 'string' },
      vcd: { type: 'string' },
      faults: { type: 'string' },
      plusarg: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
  });
  const plusargs = [...(values.plusarg ?? []), ...(env.plusargs ?? [])];
  const withPlusargs = plusargs.length ? { plusargs } : {};
  const show = (r: unknown, text: () => string) => (values.json ? bigintJson(r) : text());
  if (values.dut === 'rnic' && values.scenario !== undefined) {
    if (values.random) throw new UsageError('--scenario and --random are alternatives: give one');
    const r = runScenarioCosim({
      scenario: values.scenario,
      seed: toNumber(values.seed),
      ...(values.width !== undefined && { width: toNumber(values.width) }),
      ...(values.config !== undefined && { config: values.config }),
      ...(values.rtl !== undefined && { rtl: values.rtl }),
      ...(values.trace && { trace: true }),
      out: values.out,
      ...withPlusargs,
      ...(env.evidence === false && { evidence: false }),
    });
    const m = r.firstMismatch;
    return { failed: r.mismatches + r.violations > 0, output: show(r, () => formatScenarioCosim(r)), first: m ? m.what : r.firstViolation ?? '', cycle: m?.cycle ?? null };
  }
  if (values.dut === 'rnic') {
    const r = runRnicCosim({
      seed: toNumber(values.seed),
      ops: toNumber(values.ops),
      faults: values.faults === undefined ? 0.05 : Number(values.faults),
      ...(values.width !== undefined && { width: toNumber(values.width) }),
      ...(values.config !== undefined && { config: values.config }),
      ...(values.rtl !== undefined && { rtl: values.rtl }),
      ...(values.trace && { trace: true }),
      out: values.out,
      ...(env.progress && { progress: env.progress }),
      ...withPlusargs,
      ...(env.evidence === false && { evidence: false }),
    });
    const m = r.firstMismatch;
    return { failed: r.mismatches + r.violations > 0, output: show(r, () => formatRnicCosim(r)), first: m ? `QP ${m.qp}: ${m.what}` : r.firstViolation ?? '', cycle: m?.cycle ?? null };
  }
  const args = {
    ...(values.faults !== undefined && { faults: Number(values.faults) }),
    dut: values.dut,
    width: toNumber(values.width ?? '8'),
    ...(values.depth !== undefined && { depth: toNumber(values.depth) }),
    seed: toNumber(values.seed),
    frames: toNumber(values.frames),
    ...(values.rtl !== undefined && { rtl: values.rtl }),
    ...(values.vcd !== undefined && { vcd: values.vcd }),
    ...withPlusargs,
  };
  const r = runCosim(args);
  const failed = failures(r) > 0;
  const replay = blockReplay(args);
  const first = 'firstMismatch' in r && r.firstMismatch ? JSON.stringify(r.firstMismatch).slice(0, 200) : '';
  return { failed, output: show({ ...r, replay }, () => formatCosim(r) + (failed ? `\nreplay: ${replay}` : '')), first, cycle: null };
}
