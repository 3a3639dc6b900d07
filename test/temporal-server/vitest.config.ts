import { defineConfig } from 'vitest/config';

// `npm run test:temporal-server`: the integration essentials and the server's own faults against the Temporal
// server users deploy (src/stack/temporal-server.ts, built by `npm run setup:temporal-server`), instead of the dev
// server. Every test stack in these files starts it (RATCHET_TEST_TEMPORAL=server): its own Postgres, SQL
// visibility, four history shards.
export default defineConfig({
  test: {
    include: [
      'test/temporal-server/**/*.server.ts',
      // Plain runs, duplicates, search attributes and inference faults.
      'test/integration/trajectory-run.test.ts',
      // Grouped runs, consume and acknowledge.
      'test/integration/batch-consumption.test.ts',
      // The controller's visibility sweep over closed workflows.
      'test/integration/closed-trajectories.test.ts',
      // Queued groups continuing as new.
      'test/integration/queued-continue-as-new.test.ts',
      // A new release deployed over the previous one's running workflows.
      'test/deploy/workflow-deploy.test.ts',
    ],
    env: { RATCHET_TEST_TEMPORAL: 'server' },
    setupFiles: ['test/setup-logging.ts'],
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
