import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { CACHE_DIR_ENV, INSTALLED, PACKAGE_ROOT, cacheDir } from '../../hdl-gen/gen/paths';

const ROOT = resolve(fileURLToPath(new URL('../../', import.meta.url)));

// An installed copy (under node_modules) is covered by pack-install.test.ts.
describe('the cache directory of a checkout', () => {
  test('is <checkout>/.cache, with one folder per kind of cache', () => {
    expect(PACKAGE_ROOT).toBe(ROOT);
    expect(INSTALLED).toBe(false);
    expect(cacheDir(undefined, {})).toBe(join(ROOT, '.cache'));
    expect(cacheDir('verilator', {})).toBe(join(ROOT, '.cache', 'verilator'));
  });

  test('moves wherever RNIC_CACHE_DIR says, a relative value taken from the working directory', () => {
    expect(CACHE_DIR_ENV).toBe('RNIC_CACHE_DIR');
    expect(cacheDir('gen', { RNIC_CACHE_DIR: '/var/cache/rnic' })).toBe('/var/cache/rnic/gen');
    expect(cacheDir(undefined, { RNIC_CACHE_DIR: 'here' })).toBe(resolve(process.cwd(), 'here'));
    // An empty value is unset: the default holds.
    expect(cacheDir(undefined, { RNIC_CACHE_DIR: '' })).toBe(join(ROOT, '.cache'));
  });
});
