import { readFileSync } from 'node:fs';
import { ZodError } from 'zod';
import { parseConfig, type RnicConfig } from '../hdl-gen/gen/config';
import { generate, writeGenerated } from '../hdl-gen/gen/generate';
import { UsageError, formatIssues } from './scenario-cli';

/** Reads a generator configuration (JSON); a bad field is named. */
export function loadConfig(path: string | undefined): RnicConfig {
  if (!path) return parseConfig({});
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(path, 'utf8'));
  } catch (e) {
    throw new UsageError(`cannot read configuration ${path}: ${(e as Error).message}`);
  }
  try {
    return parseConfig(json);
  } catch (e) {
    if (e instanceof ZodError) throw new UsageError(`configuration ${path} is invalid:\n${formatIssues(e)}`);
    throw e;
  }
}

export function runGen(configPath: string | undefined, out: string): string[] {
  const files = generate(loadConfig(configPath));
  writeGenerated(files, out);
  return files.map((f) => f.path);
}
