/**
 * The external tools a model build needs (Verilator, make, g++, Node's C headers), their
 * versions (part of the build key: a different compiler must not reuse a cached addon), and
 * running one build step with its output kept for the error message.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface Toolchain {
  readonly verilatorInclude: string;
  readonly nodeInclude: string;
  readonly verilatorVersion: string;
  readonly gxxVersion: string;
}

/** Lines of a failed step's output quoted in the error. */
export const ERROR_TAIL_LINES = 40;

function capture(cmd: string, args: readonly string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8' });
  if (r.error) throw new Error(`cannot run ${cmd} (${r.error.message}): is it installed and on PATH?`);
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} exited with ${r.status}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Node's headers ship next to the binary (<prefix>/bin/node → <prefix>/include/node). */
export function nodeIncludeDir(): string {
  const dir = path.join(path.dirname(process.execPath), '..', 'include', 'node');
  if (!existsSync(path.join(dir, 'node_api.h'))) {
    throw new Error(
      `node_api.h not found in ${dir}: building a Verilator model needs Node's C headers ` +
        `(install the Node.js development headers for ${process.version}, e.g. the libnode-dev package or an official Node tarball)`,
    );
  }
  return dir;
}

let cached: Toolchain | undefined;

export function toolchain(): Toolchain {
  if (cached) return cached;
  const nodeInclude = nodeIncludeDir();
  const verilatorVersion = capture('verilator', ['--version']);
  const root = capture('verilator', ['--getenv', 'VERILATOR_ROOT']);
  const verilatorInclude = path.join(root, 'include');
  if (!existsSync(path.join(verilatorInclude, 'verilated.h'))) throw new Error(`verilated.h not found in ${verilatorInclude} (VERILATOR_ROOT=${root})`);
  const gxxVersion = capture('g++', ['--version']).split('\n')[0] ?? '';
  capture('make', ['--version']);
  cached = { verilatorInclude, nodeInclude, verilatorVersion, gxxVersion };
  return cached;
}

const quote = (a: string): string => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", `'\\''`)}'`);
export const commandLine = (cmd: string, args: readonly string[]): string => [cmd, ...args].map(quote).join(' ');

/**
 * Runs one build step with stdout and stderr interleaved into `logPath`. On failure the error
 * carries the command line and the last lines of its output.
 */
export function runStep(step: string, cmd: string, args: readonly string[], cwd: string, logPath: string): void {
  const fd = openSync(logPath, 'w');
  let r;
  try {
    r = spawnSync(cmd, args, { cwd, stdio: ['ignore', fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (r.error || r.status !== 0) {
    const lines = readFileSync(logPath, 'utf8').trimEnd().split('\n');
    const tail = lines.slice(-ERROR_TAIL_LINES).join('\n');
    const why = r.error ? r.error.message : r.signal ? `killed by ${r.signal}` : `exit status ${r.status}`;
    throw new Error(`${step} failed (${why}):\n  ${commandLine(cmd, args)}\n--- last ${ERROR_TAIL_LINES} lines of output ---\n${tail}`);
  }
}
