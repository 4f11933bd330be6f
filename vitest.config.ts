import { defineConfig } from 'vitest/config';
import SlowFirstSequencer from './test/support/sequencer';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The `rnic` command the tests start, bundled once for the run (test/support/cli-bundle.ts).
    globalSetup: ['test/support/cli-bundle.ts'],
    // No time limits: a test judges behaviour, never speed. A Verilator build or a yosys run on a
    // loaded machine takes several times as long as on a quiet one (24 minutes for the suite on a
    // busy 2-core machine), and a limit it can hit fails a correct design. Hangs are bounded where
    // they can happen: every co-simulation waits a bounded number of cycles.
    testTimeout: 0,
    hookTimeout: 0,
    // Co-simulation tests share Verilator builds; files run in parallel, tests in a file in order.
    pool: 'forks',
    // vitest keeps one core for itself by default; on a 2-core CI machine that leaves one worker,
    // and most files are single-threaded simulations: run two.
    maxWorkers: 2,
    // The slowest files first (test/support/sequencer.ts), so none runs alone at the end.
    sequence: { sequencer: SlowFirstSequencer },
  },
});
