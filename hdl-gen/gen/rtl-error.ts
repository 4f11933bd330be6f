/**
 * The Verilog given to a tool cannot be used as it is: a file is missing, Verilator rejects it, or
 * its ports are not the ones its manifest lists. This is not a mismatch with the model (exit status
 * 1) nor a usage error (2): the CLI reports it with its own exit status, 3, in a short message that
 * names the file and the line or port.
 */
export type RtlProblem = 'missing-file' | 'verilog' | 'ports' | 'manifest';

export class RtlError extends Error {
  constructor(
    readonly problem: RtlProblem,
    message: string,
  ) {
    super(message);
    this.name = 'RtlError';
  }
}

/** The exit status of `rnic` when the RTL cannot be built or opened. */
export const EXIT_BROKEN_RTL = 3;

/** Verilator's diagnostics, e.g. `%Error: rtl/x.v:12:5: syntax error…`, as `rtl/x.v:12: syntax error…`. */
export function verilatorErrors(log: string, limit = 5): string[] {
  const out: string[] = [];
  for (const line of log.split('\n')) {
    const m = /^%Error(?:-[A-Z0-9_]+)?: (.+?):(\d+):(?:\d+:)? (.*)$/.exec(line);
    if (m) out.push(`${m[1]}:${m[2]}: ${m[3]}`);
    else if (/^%Error(?:-[A-Z0-9_]+)?: (?!Exiting due to|Cannot continue)/.test(line)) out.push(line.replace(/^%Error(?:-[A-Z0-9_]+)?: /, ''));
    if (out.length >= limit) break;
  }
  return out;
}
