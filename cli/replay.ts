/**
 * The command that replays a co-simulation: every option that shaped the run, with the value it
 * had (defaults written out), so the line reproduces the run even if a default changes, plus the
 * option that makes a waveform of it.
 */
export interface ReplayArgs {
  readonly dut: string;
  readonly width?: number;
  readonly depth?: number;
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
