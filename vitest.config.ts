import { configDefaults, defineConfig } from 'vitest/config';

// Lambda runs Node 22; the AWS SDK's notice that it will need Node 22 concerns this machine only. Set here, every
// test process (and every local stack a test starts) inherits it, as CI's run does.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The dashboard's browser tests need Chromium: `npm run test:browser` (vitest.browser.config.ts).
    exclude: [...configDefaults.exclude, 'test/browser/**'],
    // Starts one DynamoDB Local and one fauxqs for the run; tests reach them with inject('engines').
    globalSetup: ['test/support/global-setup.ts'],
    // Each test file in its own process, as each handler gets its own Lambda container (also vitest's default).
    pool: 'forks',
    fileParallelism: true,
    // Two files at a time even on 2 cores (vitest's default there is one): most of an end-to-end file's time is
    // spent waiting on a local stack's engines, not computing.
    maxWorkers: 2,
    minWorkers: 1,
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
