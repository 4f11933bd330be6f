import { cosimCommand } from '../../cli/cosim-command';
import { UsageError } from '../../cli/scenario-cli';
import type { RegressRun } from './plan';

/** How one regression run ended. */
export interface RegressResult {
  readonly run: RegressRun;
  readonly status: 'pass' | 'fail' | 'refused';
  readonly seconds: number;
  /** The first difference, the refusal, or the error the run stopped with. */
  readonly detail: string;
  readonly cycle: number | null;
  /** Simulated cycles, where the run reports them. */
  readonly cycles: number | null;
  /** Its simulation rate (cycles/s, the build excluded), where the run reports it. */
  readonly cyclesPerSecond: number | null;
  /** The command that replays the run. */
  readonly replay: string;
}

/**
 * Runs one regression run in this process, as `rnic cosim` would: a difference or violation fails
 * it; an example scenario the RTL refuses by name is reported as refused; an error is a failure
 * with its message (a hang is bounded by the harness and ends as one).
 */
export function runRegress(run: RegressRun, seed: number, extra: { readonly rtl?: string; readonly plusargs?: readonly string[]; readonly evidence?: boolean } = {}): RegressResult {
  const argv = [...run.args, '--seed', String(seed), '--json', ...(extra.rtl ? ['--rtl', extra.rtl] : [])];
  const replay = `npx rnic cosim ${argv.filter((a) => a !== '--json').join(' ')}${(extra.plusargs ?? []).map((p) => ` --plusarg ${p}`).join('')}`;
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;
  try {
    const o = cosimCommand(argv, { ...(extra.plusargs && { plusargs: extra.plusargs }), evidence: extra.evidence ?? true });
    return { run, status: o.failed ? 'fail' : 'pass', seconds: seconds(), detail: o.first, cycle: o.cycle, ...cyclesOf(o.output), replay };
  } catch (e) {
    const message = (e as Error).message;
    if (run.scenario && e instanceof UsageError && /cannot run on the RTL/.test(message)) {
      return { run, status: 'refused', seconds: seconds(), detail: message.replace(/^.*cannot run on the RTL: /, ''), cycle: null, cycles: null, cyclesPerSecond: null, replay };
    }
    return { run, status: 'fail', seconds: seconds(), detail: `stopped: ${message.split('\n')[0]!.slice(0, 300)}`, cycle: null, cycles: null, cyclesPerSecond: null, replay };
  }
}

/** The cycles and rate of a run's JSON report (the top level, or the sum of its parts', e.g. mpa's tx and rx). */
function cyclesOf(output: string): { cycles: number | null; cyclesPerSecond: number | null } {
  type Part = { cycles?: unknown; simCyclesPerSecond?: unknown };
  try {
    const r = JSON.parse(output) as Part & Record<string, unknown>;
    const parts = typeof r.cycles === 'number' ? [r] : Object.values(r).filter((v): v is Part => typeof v === 'object' && v !== null && typeof (v as Part).cycles === 'number');
    if (!parts.length) return { cycles: null, cyclesPerSecond: null };
    const cycles = parts.reduce((a, p) => a + (p.cycles as number), 0);
    // Seconds of simulation: each part's cycles over its rate.
    const seconds = parts.every((p) => typeof p.simCyclesPerSecond === 'number' && p.simCyclesPerSecond > 0)
      ? parts.reduce((a, p) => a + (p.cycles as number) / (p.simCyclesPerSecond as number), 0)
      : 0;
    return { cycles, cyclesPerSecond: seconds > 0 ? Math.round(cycles / seconds) : null };
  } catch {
    return { cycles: null, cyclesPerSecond: null };
  }
}
