import { ApplicationFailure } from '@temporalio/common';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyFailure, FailureType } from '../../src/activities/failures.js';
import { freePort } from '../../src/stack/free-port.js';
import { openDatabase } from '../../src/store/database.js';
import { isPermanentDatabaseError, isTransientDatabaseError } from '../../src/store/database-errors.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await startTestDatabase();
});

afterAll(async () => {
  await db?.stop();
});

/** The error a statement fails with on the real server. */
async function rejection(sql: string, values: unknown[] = []): Promise<unknown> {
  return db.pool.query(sql, values).then(
    () => expect.fail(`expected ${sql} to fail`),
    (error: unknown) => error,
  );
}

function expectFailure(error: unknown, type: string, nonRetryable: boolean): ApplicationFailure {
  const failure = classifyFailure(error);
  expect(failure).toBeInstanceOf(ApplicationFailure);
  expect(failure).toMatchObject({ type, nonRetryable });
  return failure as ApplicationFailure;
}

describe('classifyFailure on errors from a real Postgres', () => {
  it('fails a NUL byte in text at once, as DatabaseRejected naming the SQLSTATE', async () => {
    const error = await rejection('SELECT $1::text', ['answer \u0000 here']);
    expect(isPermanentDatabaseError(error)).toBe(true);
    expect(expectFailure(error, FailureType.DatabaseRejected, true).message).toMatch(/SQLSTATE 22021/);
  });

  it('fails invalid input syntax, a constraint violation, a syntax error and a program limit at once', async () => {
    const errors = {
      '22P02': await rejection('SELECT $1::int', ['seven']),
      '23514': await rejection(`INSERT INTO trajectories (trajectory_id, qid, status, layout, num_turns, birth_time, failure_class)
                                VALUES ('t', 'q', 'failed', 'seed', 0, 0, 'weather')`),
      '42601': await rejection('SELEC 1'),
      '42P01': await rejection('SELECT * FROM no_such_table'),
      '54000': await rejection(`SELECT '${'{'.repeat(7)}1${'}'.repeat(7)}'::int[]`),
    };
    for (const [state, error] of Object.entries(errors)) {
      expect((error as { code?: string }).code).toBe(state);
      expect(expectFailure(error, FailureType.DatabaseRejected, true).message).toContain(`SQLSTATE ${state}`);
    }
  });

  it('retries a refused connection as DatabaseUnavailable', async () => {
    const url = new URL(db.url);
    url.port = String(await freePort());
    const closed = new pg.Pool({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
    const error = await closed.query('SELECT 1').then(
      () => expect.fail('a closed port answered'),
      (e: unknown) => e,
    );
    await closed.end();
    expect(isTransientDatabaseError(error)).toBe(true);
    expect(isPermanentDatabaseError(error)).toBe(false);
    expectFailure(error, FailureType.DatabaseUnavailable, false);
    // openDatabase wraps the same refusal with the redacted address.
    const wrapped = await openDatabase(url.toString()).then(
      () => expect.fail('opened a closed port'),
      (e: unknown) => e,
    );
    expect(expectFailure(wrapped, FailureType.DatabaseUnavailable, false).message).toMatch(/cannot reach Postgres at postgres:\/\/ratchet:\*\*\*@/);
  });

  it('retries a connection the server terminates (57P01) as DatabaseUnavailable', async () => {
    const victim = new pg.Client({ connectionString: db.url });
    victim.on('error', () => undefined);
    await victim.connect();
    const pid = (await victim.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const sleeping = victim.query('SELECT pg_sleep(30)').then(
      () => expect.fail('the sleep was not terminated'),
      (e: unknown) => e,
    );
    await expect
      .poll(async () => (await db.pool.query("SELECT count(*)::int AS n FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [pid])).rows[0].n)
      .toBe(1);
    await db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
    const error = await sleeping;
    await victim.end().catch(() => undefined);
    expect((error as { code?: string }).code).toBe('57P01');
    expectFailure(error, FailureType.DatabaseUnavailable, false);
  });

  it('leaves other errors to the default retry policy, unchanged', () => {
    const error = new TypeError('a bug');
    expect(classifyFailure(error)).toBe(error);
    const statementTimeout = Object.assign(new pg.DatabaseError('canceling statement due to statement timeout', 0, 'error'), { code: '57014' });
    expect(classifyFailure(statementTimeout)).toBe(statementTimeout);
  });
});
