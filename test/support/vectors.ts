import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared public test vectors: `../shared/vectors` beside the project, or `$RNIC_SHARED/vectors`. */
export const SHARED_DIR = process.env.RNIC_SHARED ?? fileURLToPath(new URL('../../../shared/', import.meta.url));
export const VECTORS_DIR = `${SHARED_DIR.replace(/\/?$/, '/')}vectors/`;

export function loadVectors<T = any>(name: string): T {
  const path = VECTORS_DIR + name;
  if (!existsSync(path)) {
    throw new Error(`shared test vector ${path} not found: the project expects ../shared beside it (or set RNIC_SHARED)`);
  }
  return JSON.parse(readFileSync(path, 'utf8')) as T;
}

export const num = (s: string): number => Number(s) >>> 0;
