import { defineConfig } from 'vitest/config';

/**
 * `npm run test:browser`: the developer dashboard driven in a real Chromium (Debian's `chromium` package, through
 * playwright-core; no browser is downloaded) against a local stack. Kept out of `npm test`, which must pass on a
 * machine without Chromium.
 */
export default defineConfig({
  test: {
    include: ['test/browser/**/*.browser.test.ts'],
    pool: 'forks',
    // One stack and one browser per file; the files run one after another on a 2-core machine.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
