import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts', 'spec/**/*.test.ts', 'console/src/**/*.test.ts'],
    // Real agent CLIs: `make agents` (vitest.agents.config.ts).
    exclude: [...configDefaults.exclude, 'test/agents/**'],
    testTimeout: 30_000,
    // Starting a gateway on PGlite takes seconds, and minutes on a machine loaded by other runs.
    hookTimeout: 180_000,
    pool: 'forks',
    // A green run prints its summary and what was skipped, nothing else: a test's console output is
    // shown when it fails, and progress is one dot per test (a failure is still printed whole).
    silent: 'passed-only',
    reporters: ['dot'],
    // log-scan-setup: every gateway's log lines of the run are captured, then scanned for keys and tokens.
    globalSetup: ['test/support/reference-setup.ts', 'test/support/chromium-setup.ts', 'test/support/log-scan-setup.ts'],
  },
});
