import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The synthesis result cache. Place-and-route takes seconds to minutes, so a result is kept as
 * `result.json` in its work directory `<repo>/.cache/synth/<top>-<key>/`, next to the logs that
 * produced it, and reused while the key is the same. The key is the sha256 of everything that can
 * change the result: the source contents in order, the options, the tool versions, and
 * FLOW_VERSION. (Files pulled in by `include are not hashed; this project generates flat files.)
 */

/** Bump when a script, a wrapper or a measurement changes meaning, so old results are not reused. */
export const FLOW_VERSION = 1;

/** Hex digits of the key in a work directory's name: enough to never collide in practice. */
export const KEY_DIGITS_IN_DIR = 16;

export const RESULT_FILE = 'result.json';

export const REPO_ROOT = fileURLToPath(new URL('../', import.meta.url));

export const DEFAULT_CACHE_ROOT = join(REPO_ROOT, '.cache', 'synth');

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface CacheKeyInput {
  sources: readonly string[];
  options: Record<string, unknown>;
  tools: Record<string, string>;
}

/** The key: file contents by hash (not by path, so a moved checkout still hits). */
export function cacheKey(input: CacheKeyInput): string {
  const sources = input.sources.map((s) => sha256(readFileSync(s)));
  return sha256(JSON.stringify({ flow: FLOW_VERSION, sources, options: input.options, tools: input.tools }));
}

export function workDirFor(cacheRoot: string, top: string, key: string): string {
  return join(cacheRoot, `${top}-${key.slice(0, KEY_DIGITS_IN_DIR)}`);
}

export function readCachedResult<T>(workDir: string): T | undefined {
  const file = join(workDir, RESULT_FILE);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined; // a torn or hand-edited file: synthesise again
  }
}

/** Written to a temporary name and renamed, so a reader never sees half a result. */
export function writeCachedResult(workDir: string, result: unknown): void {
  const file = join(workDir, RESULT_FILE);
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(result, null, 2) + '\n');
  renameSync(tmp, file);
}
