import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

/**
 * Runs one EDA tool to completion with stdout and stderr going straight into a log file (not
 * through a Node buffer: a yosys log of a large design runs to tens of megabytes), and turns
 * every way it can fail into a `FlowError` that carries the end of that log.
 */

/** How many log lines a failure shows: enough for yosys's error and the pass that raised it. */
export const LOG_TAIL_LINES = 25;

/** A tool failed, or could not start; `logTail` is the end of its log, ready to show a user. */
export class FlowError extends Error {
  constructor(
    message: string,
    readonly logFile?: string,
    readonly logTail = '',
  ) {
    super(logTail === '' ? message : `${message}\n--- end of ${logFile ?? 'log'} ---\n${logTail}`);
    this.name = 'FlowError';
  }
}

export interface ToolRun {
  /** The tool's exit status (0 = success). */
  status: number;
  logFile: string;
  /** The whole log, for the parsers. */
  log: string;
}

/** The last `lines` non-empty lines of a log. */
export function logTail(log: string, lines = LOG_TAIL_LINES): string {
  return log
    .split('\n')
    .filter((l) => l.trim() !== '')
    .slice(-lines)
    .join('\n');
}

/** The lines of a log that report an error, in order (yosys and nextpnr both prefix "ERROR:"). */
export function errorLines(log: string): string[] {
  return log
    .split('\n')
    .filter((l) => l.includes('ERROR:'))
    .map((l) => l.trim());
}

/**
 * Runs `command args` in `cwd` with its output in `logFile`. A non-zero exit comes back as a
 * status (the caller decides whether that is fatal: nextpnr's "does not fit" is a result);
 * a tool that cannot be started or is killed by a signal throws.
 */
export function runTool(command: string, args: readonly string[], cwd: string, logFile: string): ToolRun {
  const fd = openSync(logFile, 'w');
  let result;
  try {
    result = spawnSync(command, args, { cwd, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  const log = existsSync(logFile) ? readFileSync(logFile, 'utf8') : '';
  if (result.error) {
    const why = (result.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'is not installed (not on PATH)' : result.error.message;
    throw new FlowError(`${command} ${why}`, logFile, logTail(log));
  }
  if (result.status === null) {
    throw new FlowError(`${command} was killed by ${result.signal ?? 'a signal'}`, logFile, logTail(log));
  }
  return { status: result.status, logFile, log };
}

/** The first line a tool prints for `versionFlag`, e.g. "Yosys 0.23 (git sha1 7ce5011c24b)". */
export function toolVersion(command: string, versionFlag: string): string {
  const r = spawnSync(command, [versionFlag], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new FlowError(`${command} ${versionFlag} failed: ${r.error?.message ?? r.stderr}`);
  }
  return `${r.stdout}${r.stderr}`.split('\n').find((l) => l.trim() !== '')?.trim() ?? '';
}
