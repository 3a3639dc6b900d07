import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/setup-logging.ts'],
    // One Postgres for the files that need a database and no Temporal; each gets a database of its own in it.
    globalSetup: ['test/store/shared-postgres.ts'],
    // Integration files each start a Temporal dev server and a Postgres; on a 2-core machine
    // running them side by side only makes every timeout flakier.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
