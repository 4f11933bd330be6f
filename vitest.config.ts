import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    // A beforeAll that builds Verilator models (cold cache, a loaded machine) takes minutes, not 10 s.
    hookTimeout: 600_000,
    // Co-simulation tests share Verilator builds; files run in parallel, tests in a file in order.
    pool: 'forks',
    // vitest keeps one core for itself by default; on a 2-core CI machine that leaves one worker,
    // and most files are single-threaded simulations: run two.
    maxWorkers: 2,
  },
});
