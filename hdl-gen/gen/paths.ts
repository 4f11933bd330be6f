/**
 * Where the package is, and where its caches go: generated Verilog (`gen/`), Verilator builds
 * (`verilator/`), synthesis runs (`synth/`), mutants (`mutants/`).
 *
 * One variable moves every cache: RNIC_CACHE_DIR. Without it, a git checkout keeps its caches in
 * `<checkout>/.cache` (beside the sources, as before), and an installed copy (one under a
 * `node_modules` directory, which npm may replace or make read-only) in the user's cache
 * directory, `$XDG_CACHE_HOME/iwarp-rnic` or `~/.cache/iwarp-rnic`.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_NAME = 'iwarp-rnic';
/** The environment variable that moves every cache of the project. */
export const CACHE_DIR_ENV = 'RNIC_CACHE_DIR';

/**
 * The directory holding this package's package.json, found by walking up from this file: the
 * same answer from the sources (`hdl-gen/gen/`) and from the bundle (`dist/`). Null when this
 * file was copied somewhere without it.
 */
function findPackageRoot(from: string): string | null {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest)) {
      try {
        if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name === PACKAGE_NAME) return dir;
      } catch {
        // Not ours (or not JSON): keep walking.
      }
    }
    if (dirname(dir) === dir) return null;
  }
}

const FOUND_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

/** The package's root: the checkout, or `node_modules/iwarp-rnic` when installed. */
export const PACKAGE_ROOT: string = FOUND_ROOT ?? resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** True when the package runs from an installed copy rather than a checkout of the repository. */
export const INSTALLED: boolean = FOUND_ROOT === null || FOUND_ROOT.split(sep).includes('node_modules');

/** The variables read here (a plain record, so the declarations need no Node types). */
type Environment = Readonly<Record<string, string | undefined>>;

/** The user's cache directory for this package (XDG Base Directory rules). */
function userCacheDir(env: Environment): string {
  const xdg = env.XDG_CACHE_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), PACKAGE_NAME);
}

/**
 * The cache directory, or `sub` inside it: RNIC_CACHE_DIR when set (a relative value is taken from
 * the working directory), else `<checkout>/.cache`, else the user's cache directory. Read on every
 * call, so a program may set the variable after importing the package.
 */
export function cacheDir(sub?: string, env: Environment = process.env): string {
  const set = env[CACHE_DIR_ENV];
  const root = set ? resolve(set) : INSTALLED ? userCacheDir(env) : join(PACKAGE_ROOT, '.cache');
  return sub === undefined ? root : join(root, sub);
}
