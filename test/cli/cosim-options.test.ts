import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { replayLine } from '../../cli/replay';
import { parseConfig } from '../../hdl-gen/gen/config';
import { COSIM_DUTS, cosimDut, type CosimArgs } from '../../sim/cosim/registry';
import { regressPlan } from '../../sim/regress/plan';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const rnic = (...args: string[]) => spawnSync('node', ['bin/rnic.mjs', 'cosim', ...args], { cwd: ROOT, encoding: 'utf8' });

/**
 * `rnic cosim` dispatches through the registry of DUTs (sim/cosim/registry.ts): an option a DUT
 * does not take is refused by name before anything is built, so these run in seconds.
 */
describe('rnic cosim options, by DUT', () => {
  test.each([
    [['--dut', 'crc32c', '--ops', '5'], /--ops does not apply to --dut crc32c/],
    [['--dut', 'atomic_unit', '--width', '8'], /--width does not apply to --dut atomic_unit/],
    [['--dut', 'stag_table', '--faults', '0.1'], /--faults does not apply to --dut stag_table/],
    [['--dut', 'mpa_tx', '--depth', '64'], /--depth does not apply to --dut mpa_tx/],
    [['--dut', 'mpa', '--vcd', 'x.vcd'], /--vcd does not apply to --dut mpa/],
    [['--dut', 'rx', '--config', 'x.json'], /--config does not apply to --dut rx/],
    [['--frames', '10'], /--frames does not apply to --dut rnic/],
    [['--scenario', 'examples/rnic-responder.json', '--ops', '3'], /--ops does not apply to --scenario/],
    [['--dut', 'crc32c', '--trace-vcd'], /--trace-vcd does not apply to --dut crc32c/],
    [['--dut', 'mpa', '--trace-from', '5'], /--trace-from does not apply to --dut mpa/],
    [['--trace-from', '10'], /--trace-from needs a waveform: give --trace \(rnic\) or --vcd FILE/],
    [['--trace', '--trace-from', '10', '--trace-to', '5'], /--trace-to must be after --trace-from \(10\), got 5/],
    [['--trace', '--trace-from', 'x'], /--trace-from must be a cycle number \(0 or more\), got x/],
  ])('%j is refused with exit status 2, naming the option', (args, message) => {
    const p = rnic(...args);
    expect(p.status).toBe(2);
    expect(p.stderr).toMatch(message);
  });

  test('an unknown --dut is refused with every DUT listed, rnic among them', () => {
    const p = rnic('--dut', 'nope');
    expect(p.status).toBe(2);
    expect(p.stderr).toContain(`--dut must be one of ${COSIM_DUTS.map((d) => d.name).join(', ')}, got 'nope'`);
    expect(COSIM_DUTS.map((d) => d.name)).toEqual(expect.arrayContaining(['rnic', 'crc32c', 'mpa_tx', 'mpa_rx', 'mpa', 'ddp_rx_hdr', 'atomic_unit', 'stag_table', 'rx', 'rnic_rx']));
  });

  test('the replay line writes every option the DUT takes, with the defaults the run had', () => {
    const args: CosimArgs = { width: 8, depth: 256, qps: 1, seed: 3, frames: 50, ops: 1000, faults: 0.5, config: parseConfig({}), trace: false, out: 'out', evidence: true };
    expect(replayLine(cosimDut('ddp_rx_hdr')!, args)).toBe('rnic cosim --dut ddp_rx_hdr --width 8 --seed 3 --frames 50 --faults 0.5 --vcd ddp_rx_hdr.vcd');
    expect(replayLine(cosimDut('atomic_unit')!, args)).toBe('rnic cosim --dut atomic_unit --seed 3 --frames 50 --vcd atomic_unit.vcd');
    expect(replayLine(cosimDut('stag_table')!, args)).toBe('rnic cosim --dut stag_table --depth 256 --seed 3 --frames 50 --vcd stag_table.vcd');
    expect(replayLine(cosimDut('mpa_tx')!, { ...args, qps: 4 })).toBe('rnic cosim --dut mpa_tx --width 8 --qps 4 --seed 3 --frames 50 --vcd mpa_tx.vcd');
    expect(replayLine(cosimDut('rnic')!, { ...args, faults: 0.05 }, { config: 'c.json' })).toBe('rnic cosim --dut rnic --width 8 --seed 3 --ops 1000 --faults 0.05 --config c.json --trace');
    expect(replayLine(cosimDut('rnic')!, args, { scenario: 'examples/demo.json' })).toBe('rnic cosim --dut rnic --scenario examples/demo.json --width 8 --seed 3 --trace');
  });

  test('every regression run gives only options its DUT takes, and simulates the modules the registry names', () => {
    for (const run of regressPlan()) {
      const d = cosimDut(run.args[1]!)!;
      const given = run.args.filter((a) => a.startsWith('--')).map((a) => a.slice(2)).filter((a) => a !== 'dut');
      for (const o of given) expect(d.options, `${run.name}: --${o}`).toContain(o);
      expect(run.tops.length).toBeGreaterThan(0);
    }
  });
});
