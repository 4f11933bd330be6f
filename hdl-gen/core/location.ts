/**
 * Where in the TypeScript generator a hardware object was created, so that elaboration errors
 * point at the line that needs fixing ("crc32c.ts:42:17"), not at the library.
 */
export interface SourceLocation {
  readonly file: string;
  readonly line: number;
  readonly column: number;
}

const LIBRARY = /[\\/]hdl-gen[\\/](core|emit)[\\/]/;

/** The first stack frame outside hdl-gen's own core and emitter. */
export function callerLocation(): SourceLocation | null {
  const stack = new Error().stack?.split('\n').slice(1) ?? [];
  for (const frame of stack) {
    const m = /\(?((?:file:\/\/)?[^()\s]+):(\d+):(\d+)\)?\s*$/.exec(frame);
    if (!m || LIBRARY.test(m[1]!) || m[1]!.startsWith('node:')) continue;
    return { file: m[1]!.replace(/^file:\/\//, ''), line: Number(m[2]), column: Number(m[3]) };
  }
  return null;
}

export function formatLocation(loc: SourceLocation | null): string {
  if (!loc) return '<unknown location>';
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
