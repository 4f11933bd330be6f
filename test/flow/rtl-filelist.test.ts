import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import type { Manifest } from '../../hdl-gen/index';

/**
 * The committed rtl/ as another tool flow reads it: every file rtl/rnic.f lists, in its order,
 * into one yosys session, then `hierarchy -check -top <manifest top>` (every instantiated module is
 * defined, the top exists), `proc` and `check -assert` (no undriven or multiply driven net, no
 * combinational loop), without a single warning. Elaboration only, no synthesis: yosys takes
 * ~3 s of CPU on the 4-QP rnic_top_w8. generate.test.ts checks that rtl/ is what the generator emits;
 * this checks that what it emits is a complete, readable design.
 */

const RTL = fileURLToPath(new URL('../../rtl/', import.meta.url));
const FILELIST = 'rnic.f';
const tmp = mkdtempSync(join(tmpdir(), 'rnic-filelist-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** rnic.f: one path a line, relative to its directory; blank lines and `//` or `#` comments skipped. */
function listedFiles(dir: string): string[] {
  return readFileSync(join(dir, FILELIST), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('//') && !l.startsWith('#'));
}

const manifestTop = (dir: string): string => (JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8')) as Manifest).top;

interface ReadCheck {
  status: number | null;
  log: string;
  warnings: string[];
}

/** yosys on `dir`'s filelist: read, elaborate from `top`, check. Paths are passed as listed, from `dir`. */
function readCheck(dir: string, top: string): ReadCheck {
  const script = [`read_verilog ${listedFiles(dir).join(' ')}`, `hierarchy -check -top ${top}`, 'proc', 'check -assert'].join('; ');
  const r = spawnSync('yosys', ['-p', script], { cwd: dir, encoding: 'utf8', maxBuffer: 64 << 20 });
  const log = `${r.stdout}${r.stderr}${r.error ? String(r.error) : ''}`;
  return { status: r.status, log, warnings: log.split('\n').filter((l) => /^Warning:/.test(l)) };
}

/** A copy of rtl/ (the .v files, manifest and filelist) whose rnic.f is `edit` of the committed one. */
function rtlCopyWithFilelist(name: string, edit: (files: string[]) => string[]): string {
  const dir = join(tmp, name);
  const files = listedFiles(RTL);
  mkdirSync(dir, { recursive: true });
  for (const f of [...files, 'manifest.json']) copyFileSync(join(RTL, f), join(dir, f));
  writeFileSync(join(dir, FILELIST), edit(files).join('\n') + '\n');
  return dir;
}

describe('rtl/rnic.f', () => {
  test('reads into yosys as one design: hierarchy -check from the manifest top, proc, check -assert, no warnings', () => {
    const top = manifestTop(RTL);
    const r = readCheck(RTL, top);
    expect(r.status, r.log.split('\n').slice(-30).join('\n')).toBe(0);
    expect(r.warnings).toEqual([]);
    expect(r.log).toContain(`Top module:  \\${top}`);
    expect(r.log).toMatch(/Found and reported 0 problems/);
  });

  test('the check fails when the list leaves out a module the top instantiates', () => {
    const files = listedFiles(RTL);
    const texts = files.map((f) => readFileSync(join(RTL, f), 'utf8'));
    // The first listed module another listed file instantiates (`name u_x (`, one per line).
    const dropped = files.findIndex((f, i) => {
      const instance = new RegExp(`^${f.replace(/\.v$/, '')} \\w+ \\(`, 'm');
      return texts.some((t, j) => j !== i && instance.test(t));
    });
    expect(dropped, 'some listed module is instantiated by another').toBeGreaterThanOrEqual(0);
    const leaf = files[dropped]!.replace(/\.v$/, '');
    const dir = rtlCopyWithFilelist('missing-module', (list) => list.filter((_, i) => i !== dropped));
    const r = readCheck(dir, manifestTop(RTL));
    expect(r.status).not.toBe(0);
    expect(r.log).toMatch(new RegExp(`Module \`\\\\?${leaf}' referenced in module .* is not part of the design`));
  });

  test('the check fails when the list names a file that does not exist', () => {
    // First in the list, so yosys stops before reading the rest.
    const dir = rtlCopyWithFilelist('missing-file', (files) => ['no_such_block.v', ...files]);
    const r = readCheck(dir, manifestTop(RTL));
    expect(r.status).not.toBe(0);
    expect(r.log).toMatch(/no_such_block\.v/);
  });
});
