import type { CosimArgs, CosimDut } from '../sim/cosim/registry';

/**
 * The command that replays a co-simulation: every option that shaped the run, with the value it
 * had (defaults written out), so the line reproduces the run even if a default changes, plus the
 * option that makes a waveform of it.
 */
export interface ReplayArgs {
  readonly dut: string;
  readonly width?: number;
  readonly depth?: number;
  readonly qps?: number;
  readonly seed: number;
  readonly frames?: number;
  readonly ops?: number;
  readonly faults?: number;
  readonly config?: string;
  readonly rtl?: string;
  readonly scenario?: string;
  readonly plusargs?: readonly string[];
  /** The waveform option: `--trace` (rnic) or `--vcd FILE` (a block). */
  readonly trace?: readonly string[];
}

/** Shell-quotes an argument that needs it. */
const q = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);

export function replayCommand(a: ReplayArgs): string {
  const args: string[] = ['rnic', 'cosim', '--dut', a.dut];
  const opt = (name: string, v: string | number | undefined) => v !== undefined && args.push(`--${name}`, q(String(v)));
  opt('scenario', a.scenario);
  opt('width', a.width);
  opt('depth', a.depth);
  opt('qps', a.qps);
  opt('seed', a.seed);
  opt('frames', a.frames);
  opt('ops', a.ops);
  opt('faults', a.faults);
  opt('config', a.config);
  opt('rtl', a.rtl);
  for (const p of a.plusargs ?? []) opt('plusarg', p);
  args.push(...(a.trace ?? []).map(q));
  return args.join(' ');
}

/**
 * The replay of a run of `dut` (sim/cosim/registry.ts): every option the DUT takes, with the value
 * the run had, and its waveform option (`--trace` where it takes one, else `--vcd <dut>.vcd`). The
 * files are named as given on the command line.
 */
export function replayLine(dut: CosimDut, a: CosimArgs, files: { readonly config?: string | undefined; readonly scenario?: string | undefined } = {}): string {
  const takes = (o: Parameters<CosimDut['options']['includes']>[0]) => dut.options.includes(o);
  const scenario = takes('scenario') ? files.scenario : undefined;
  return replayCommand({
    dut: dut.name,
    ...(scenario !== undefined && { scenario }),
    ...(dut.widths && { width: a.width }),
    ...(takes('depth') && { depth: a.depth }),
    ...(takes('qps') && { qps: a.qps }),
    seed: a.seed,
    ...(takes('frames') && { frames: a.frames }),
    ...(takes('ops') && scenario === undefined && { ops: a.ops }),
    ...(takes('faults') && scenario === undefined && { faults: a.faults }),
    ...(takes('config') && files.config !== undefined && { config: files.config }),
    ...(a.rtl !== undefined && { rtl: a.rtl }),
    ...(a.plusargs && { plusargs: a.plusargs }),
    trace: takes('trace') ? ['--trace'] : takes('vcd') ? ['--vcd', `${dut.name}.vcd`] : [],
  });
}
