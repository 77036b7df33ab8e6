import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    globalSetup: ['test/postgres-setup.ts'],
    include: ['shared/test/**/*.test.ts', 'servers/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
