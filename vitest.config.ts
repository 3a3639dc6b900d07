import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup-logging.ts'],
    // Integration files each start a Temporal dev server and a Postgres; on a 2-core machine
    // running them side by side only makes every timeout flakier.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
