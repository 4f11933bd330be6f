import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    // Co-simulation tests share Verilator builds; files run in parallel, tests in a file in order.
    pool: 'forks',
  },
});
