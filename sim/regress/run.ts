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
    return { run, status: o.failed ? 'fail' : 'pass', seconds: seconds(), detail: o.first, cycle: o.cycle, replay };
  } catch (e) {
    const message = (e as Error).message;
    if (run.scenario && e instanceof UsageError && /cannot run on the RTL/.test(message)) {
      return { run, status: 'refused', seconds: seconds(), detail: message.replace(/^.*cannot run on the RTL: /, ''), cycle: null, replay };
    }
    return { run, status: 'fail', seconds: seconds(), detail: `stopped: ${message.split('\n')[0]!.slice(0, 300)}`, cycle: null, replay };
  }
}
