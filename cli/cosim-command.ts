import { parseArgs } from 'node:util';
import { MPA_TX_MAX_QPS as MAX_SHARED_QPS } from '../hdl-gen/blocks/mpa-tx';
import { COSIM_DUTS, cosimDut, type CosimArgs, type CosimDut } from '../sim/cosim/registry';
import { loadConfig } from './gen-cli';
import { replayLine } from './replay';
import { UsageError, loadScenario } from './scenario-cli';

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

/** Options every DUT takes. */
const COMMON = ['dut', 'seed', 'rtl', 'plusarg', 'json'];
const DEFAULTS = { dut: 'rnic', seed: '1', frames: '1000', ops: '1000', depth: '256', qps: '1', width: '8', out: 'out/cosim' } as const;

const positive = (name: string, v: number): number => {
  if (!Number.isInteger(v) || v < 1) throw new UsageError(`--${name} must be a positive integer, got ${v}`);
  return v;
};

/** Rejects, by name, every option given that the DUT (or the scenario mode of rnic) does not take. */
function checkApplies(dut: CosimDut, given: readonly string[], scenario: boolean): void {
  // The waveform's options come with the DUT's waveform option (--trace for rnic, else --vcd).
  const wave = dut.options.includes('trace') ? ['trace-vcd', 'trace-from', 'trace-to'] : dut.options.includes('vcd') ? ['trace-from', 'trace-to'] : [];
  const takes = new Set<string>([...COMMON, ...dut.options, ...wave]);
  for (const o of given) {
    if (!takes.has(o)) throw new UsageError(`--${o} does not apply to --dut ${dut.name} (it takes ${[...takes].filter((x) => x !== 'dut').map((x) => `--${x}`).join(', ')})`);
    if (scenario && (o === 'ops' || o === 'faults')) throw new UsageError(`--${o} does not apply to --scenario: the scenario file says what runs`);
  }
}

/** --trace-from/--trace-to: the waveform's cycles [from, to), checked; undefined when neither is given. */
function waveformWindow(from: string | undefined, to: string | undefined, waveform: boolean): { from: number; to?: number } | undefined {
  if (from === undefined && to === undefined) return undefined;
  if (!waveform) throw new UsageError(`--trace-${from !== undefined ? 'from' : 'to'} needs a waveform: give --trace (rnic) or --vcd FILE`);
  const cycle = (name: string, s: string) => {
    const v = toNumber(s);
    if (!Number.isInteger(v) || v < 0) throw new UsageError(`--${name} must be a cycle number (0 or more), got ${s}`);
    return v;
  };
  const f = from === undefined ? 0 : cycle('trace-from', from);
  if (to === undefined) return { from: f };
  const t = cycle('trace-to', to);
  if (t <= f) throw new UsageError(`--trace-to must be after --trace-from (${f}), got ${to}`);
  return { from: f, to: t };
}

/** `rnic cosim` (cli/main.ts) as a function: the regression and the mutation campaign run it in-process. */
export function cosimCommand(argv: readonly string[], env: CosimEnvironment = {}): CosimOutcome {
  const { values, tokens } = parseArgs({
    args: [...argv],
    strict: true,
    tokens: true,
    options: {
      dut: { type: 'string' },
      width: { type: 'string' },
      random: { type: 'boolean' },
      scenario: { type: 'string' },
      ops: { type: 'string' },
      config: { type: 'string' },
      trace: { type: 'boolean' },
      'trace-dir': { type: 'string' },
      'trace-vcd': { type: 'boolean' },
      'trace-from': { type: 'string' },
      'trace-to': { type: 'string' },
      out: { type: 'string' },
      depth: { type: 'string' },
      qps: { type: 'string' },
      seed: { type: 'string' },
      frames: { type: 'string' },
      rtl: { type: 'string' },
      vcd: { type: 'string' },
      faults: { type: 'string' },
      plusarg: { type: 'string', multiple: true },
      json: { type: 'boolean' },
    },
  });
  const name = values.dut ?? DEFAULTS.dut;
  const dut = cosimDut(name);
  if (!dut) throw new UsageError(`--dut must be one of ${COSIM_DUTS.map((d) => d.name).join(', ')}, got '${name}'`);
  const given = [...new Set(tokens.flatMap((t) => (t.kind === 'option' ? [t.name] : [])))];
  if (values.scenario !== undefined && values.random) throw new UsageError('--scenario and --random are alternatives: give one');
  checkApplies(dut, given, values.scenario !== undefined);

  const config = loadConfig(values.config);
  const width = toNumber(values.width ?? (dut.options.includes('config') ? String(config.width) : DEFAULTS.width));
  if (dut.widths && !dut.widths.includes(width)) throw new UsageError(`--width must be one of ${dut.widths.join(', ')} for ${dut.name}, got ${values.width}`);
  const seed = toNumber(values.seed ?? DEFAULTS.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) throw new UsageError(`--seed must be a 32-bit unsigned integer, got ${values.seed}`);
  const depth = toNumber(values.depth ?? DEFAULTS.depth);
  if (!(Number.isInteger(depth) && depth >= 16 && depth <= 65536 && (depth & (depth - 1)) === 0)) throw new UsageError(`--depth must be a power of two from 16 to 65536, got ${values.depth}`);
  const qps = toNumber(values.qps ?? DEFAULTS.qps);
  if (!(Number.isInteger(qps) && qps >= 1 && qps <= MAX_SHARED_QPS)) throw new UsageError(`--qps must be an integer from 1 to ${MAX_SHARED_QPS}, got ${values.qps}`);
  const faults = values.faults === undefined ? dut.faults ?? 0 : Number(values.faults);
  if (!(faults >= 0 && faults <= 1)) throw new UsageError(`--faults must be a probability from 0 to 1, got ${values.faults}`);
  const plusargs = [...(values.plusarg ?? []), ...(env.plusargs ?? [])];
  const traceWindow = waveformWindow(values['trace-from'], values['trace-to'], values.trace || values['trace-vcd'] || values.vcd !== undefined);
  const args: CosimArgs = {
    width,
    depth,
    qps,
    seed,
    frames: positive('frames', toNumber(values.frames ?? DEFAULTS.frames)),
    ops: positive('ops', toNumber(values.ops ?? DEFAULTS.ops)),
    faults,
    config,
    trace: (values.trace ?? false) || (values['trace-vcd'] ?? false),
    traceFormat: values['trace-vcd'] ? 'vcd' : 'fst',
    ...(traceWindow && { traceWindow }),
    out: values.out ?? DEFAULTS.out,
    ...(values['trace-dir'] !== undefined && { traceDir: values['trace-dir'] }),
    evidence: env.evidence ?? true,
    ...(values.scenario !== undefined && { scenario: loadScenario(values.scenario) }),
    ...(values.rtl !== undefined && { rtl: values.rtl }),
    ...(values.vcd !== undefined && { vcd: values.vcd }),
    ...(plusargs.length && { plusargs }),
    ...(env.progress && { progress: env.progress }),
  };
  let run;
  try {
    run = dut.run(args);
  } catch (e) {
    const message = (e as Error).message;
    // A scenario the RTL refuses, by name; a module the generator does not know, under --rtl.
    if (/cannot run on the RTL/.test(message) || (args.rtl !== undefined && /^no module/.test(message))) throw new UsageError(message);
    throw e;
  }
  const replay = replayLine(dut, args, { config: values.config, scenario: values.scenario });
  const failed = run.failures > 0;
  return { failed, output: values.json ? bigintJson({ ...run.result, replay }) : run.text(replay), first: run.first, cycle: run.cycle };
}

