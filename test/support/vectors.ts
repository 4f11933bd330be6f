import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The shared public test vectors (../shared/vectors beside the project). */
export const VECTORS_DIR = fileURLToPath(new URL('../../../shared/vectors/', import.meta.url));

export function loadVectors<T = any>(name: string): T {
  return JSON.parse(readFileSync(VECTORS_DIR + name, 'utf8')) as T;
}

export const num = (s: string): number => Number(s) >>> 0;
