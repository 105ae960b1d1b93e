import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts', 'spec/**/*.test.ts'],
    // Real agent CLIs: `make agents` (vitest.agents.config.ts).
    exclude: [...configDefaults.exclude, 'test/agents/**'],
    testTimeout: 30_000,
    // Starting a gateway on PGlite takes seconds, and minutes on a machine loaded by other runs.
    hookTimeout: 180_000,
    pool: 'forks',
    globalSetup: ['test/support/reference-setup.ts'],
  },
});
