import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Starts one DynamoDB Local and one fauxqs for the run; tests reach them with inject('engines').
    globalSetup: ['test/support/global-setup.ts'],
    // Each test file in its own process, as each handler gets its own Lambda container (also vitest's default).
    pool: 'forks',
    fileParallelism: true,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
