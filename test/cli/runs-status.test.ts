import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/stack/free-port.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { seedTrainingRun, STEPS } from '../store/training-run.js';
import { runCli } from './run-cli.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
  await seedTrainingRun(db.pool);
});

afterAll(async () => {
  await db?.stop();
});

describe('ratchet runs status', () => {
  it("prints how many steps the run's trainer recorded and the last one, beside the counters", async () => {
    // Temporal is nowhere: the Postgres side still prints, as it does whenever Temporal is unreachable.
    const result = await runCli(['runs', 'status', 'steps'], { DATABASE_URL: db.url, TEMPORAL_ADDRESS: `127.0.0.1:${await freePort()}` });
    expect(result.code, result.stderr).toBe(0);
    const status = JSON.parse(result.stdout);
    const last = STEPS.at(-1)!;
    expect(status).toMatchObject({
      runId: 'steps',
      maxHeadOffpolicyness: 2,
      training: { steps: 3, last: { step: last.step, policyVersion: last.policyVersion, metrics: last.metrics } },
    });
  });
});
