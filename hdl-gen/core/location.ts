/**
 * Where in the TypeScript generator a hardware object was created, so that elaboration errors
 * point at the line that needs fixing ("crc32c.ts:42:17"), not at the library.
 */
import { dirname, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

const LIBRARY = /[\\/]hdl-gen[\\/](core|emit)[\\/]/;

/**
 * Compiled into the package's bundle (dist/, docs/package.md), this file is no longer
 * hdl-gen/core/location.ts and the library's frames all lie in its directory: skip those too, so
 * an error in a user's generator points at the user's line.
 */
const SELF = fileURLToPath(import.meta.url);
const BUNDLE_DIR = /[\\/]hdl-gen[\\/]core[\\/]location\.[cm]?[jt]s$/.test(SELF) ? null : dirname(SELF) + sep;

/** The first frame of a stack trace outside hdl-gen's own core and emitter. */
function firstCallerFrame(stack: string | undefined): SourceLocation | null {
  for (const frame of stack?.split('\n').slice(1) ?? []) {
    const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(frame);
    if (!m || LIBRARY.test(m[1]!) || m[1]!.startsWith('node:')) continue;
    const file = m[1]!.replace(/^file:\/\//, '');
    if (BUNDLE_DIR !== null && file.startsWith(BUNDLE_DIR)) continue;
    return { file, line: Number(m[2]), column: Number(m[3]) };
  }
  return null;
}

const UNKNOWN: SourceLocation = { file: '', line: 0, column: 0 };

/**
 * A location read only when someone asks. V8 records the stack when the Error is made and
 * formats it (through the source maps, for .ts lines) on the first read of `stack`; formatting
 * for every expression was 80% of a 64-octet generation, and almost no location is ever read.
 */
class CapturedLocation implements SourceLocation {
  #trace: Error | null;
  #at: SourceLocation = UNKNOWN;
  constructor(trace: Error) {
    this.#trace = trace;
  }
  get #resolved(): SourceLocation {
    if (this.#trace) {
      this.#at = firstCallerFrame(this.#trace.stack) ?? UNKNOWN;
      this.#trace = null;
    }
    return this.#at;
  }
  get file(): string {
    return this.#resolved.file;
  }
  get line(): number {
    return this.#resolved.line;
  }
  get column(): number {
    return this.#resolved.column;
  }
}

/** Where the caller is: the first stack frame outside hdl-gen's own core and emitter. */
export function callerLocation(): SourceLocation {
  return new CapturedLocation(new Error());
}

export function formatLocation(loc: SourceLocation | null): string {
  if (!loc?.file) return '<unknown location>';
  const short = loc.file.replace(/^.*?[\\/](hdl-gen|test|cli|sim)[\\/]/, '$1/');
  return `${short}:${loc.line}:${loc.column}`;
}

/** An error in a hardware description, at the place in the generator that caused it. */
export class HdlError extends Error {
  constructor(message: string, readonly location: SourceLocation | null = callerLocation()) {
    super(`${message} (at ${formatLocation(location)})`);
    this.name = 'HdlError';
  }
}
