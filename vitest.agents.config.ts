import { defineConfig } from 'vitest/config';

/** `make agents`: the coding-agent conformance suite (real CLIs; see test/agents). */
export default defineConfig({
  test: {
    include: ['test/agents/**/*.test.ts'],
    testTimeout: 180_000,
    hookTimeout: 60_000,
    pool: 'forks',
    fileParallelism: false,
  },
});
