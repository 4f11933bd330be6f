import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { emitVerilog, type Module } from '../../hdl-gen/index';
import { verilatorLint } from '../support/rtl-checks';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The example of hdl-gen/README.md, as written there, builds, emits and lints. */
describe('hdl-gen/README.md', () => {
  test('the twenty-line block builds, names its states and record, and passes verilator -Wall', async () => {
    const readme = readFileSync(join(ROOT, 'hdl-gen/README.md'), 'utf8');
    const code = /## A block in twenty lines[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toBeTruthy();
    const dir = join(ROOT, '.cache', 'readme-example');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'example.ts');
    writeFileSync(file, code!.replaceAll("from './hdl-gen", `from '${join(ROOT, 'hdl-gen')}`));
    const { module } = (await import(file)) as { module: Module };
    const v = emitVerilog(module);
    expect(v).toMatch(/localparam \S* ?STATE_IDLE = /);
    expect(v).toMatch(/case \(state_reg\)\n\s+STATE_IDLE: begin/);
    expect(v).toMatch(/\/\/ record summary \{errors\[16\], beats\[15:0\]\}/);
    // verilator --lint-only -Wall: throws on any warning or error.
    expect(verilatorLint(module)).toBe('');
  });
});
