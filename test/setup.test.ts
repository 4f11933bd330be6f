import { spawnSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';

// `make setup` installs these; the tests further on run them for real, so check they run.
describe('tools installed by make setup', () => {
  test.each([
    ['verilator', ['--version'], /Verilator 5/],
    ['yosys', ['-V'], /Yosys/],
    ['nextpnr-ice40', ['--version'], /nextpnr-ice40/],
    ['icepack', ['-h'], /icepack/i],
    ['tshark', ['--version'], /TShark/],
  ] as const)('%s runs', (tool, args, expected) => {
    const p = spawnSync(tool, args, { encoding: 'utf8' });
    expect(p.error, `${tool} is not on PATH: run make setup`).toBeUndefined();
    expect(p.stdout + p.stderr).toMatch(expected);
  });
});
