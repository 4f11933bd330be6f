import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheDir } from '../hdl-gen/gen/paths';
import type { SynthTarget } from './targets';

/**
 * The synthesis result cache. Place-and-route takes seconds to minutes, so a result is kept as
 * `result.json` in its work directory `<cache>/synth/<top>-<key>/` (`<repo>/.cache/synth` in a
 * checkout; hdl-gen/gen/paths.ts), next to the logs that produced it, and reused while the key is
 * the same. The key is the sha256 of everything that can change the result: the source contents in
 * order, the options, the tool versions, and the target's FLOW_VERSIONS entry. (Files pulled in by
 * `include are not hashed; this project generates flat files.)
 */

/**
 * Per target: bump when its script, the wrapper or a measurement changes meaning, so old results
 * are not reused (and the other targets' results still are).
 * ice40 2: the wrapper is mapped around the module's own netlist instead of a second synthesis.
 * ice40 3, xilinx 2: LUT levels and the critical path measured (flow/depth.ts); xilinx maps with abc9.
 * xilinx 3: block RAMs without timing arcs under abc9 (flow/xilinx-bram.ts).
 */
export const FLOW_VERSIONS: Readonly<Record<SynthTarget, number>> = Object.freeze({ generic: 1, xilinx: 3, ice40: 3 });

/** Hex digits of the key in a work directory's name: enough to never collide in practice. */
export const KEY_DIGITS_IN_DIR = 16;

export const RESULT_FILE = 'result.json';

/** Where work directories go unless SynthOptions.cacheRoot says (read per run: RNIC_CACHE_DIR may change). */
export const defaultCacheRoot = (): string => cacheDir('synth');

function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex');
}

export interface CacheKeyInput {
  target: SynthTarget;
  sources: readonly string[];
  options: Record<string, unknown>;
  tools: Record<string, string>;
}

/** The key: file contents by hash (not by path, so a moved checkout still hits). */
export function cacheKey(input: CacheKeyInput): string {
  const sources = input.sources.map((s) => sha256(readFileSync(s)));
  return sha256(JSON.stringify({ flow: FLOW_VERSIONS[input.target], sources, options: input.options, tools: input.tools }));
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
