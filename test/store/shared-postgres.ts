import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The suite's one Postgres server (its `ratchet` database's URL): startTestDatabase makes a database per call in it. */
    sharedPostgresUrl: string;
  }
}

/**
 * vitest globalSetup: one embedded Postgres for every file that needs a database and no Temporal (store, UI and
 * activity tests, through startTestDatabase), instead of an initdb and a server per file: about 2 s each of CPU and
 * wall time on two cores, over 26 files. Each test database is its own (created from template0, migrated, dropped),
 * and files run one at a time (fileParallelism: false), so a file still sees only its own rows.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-shared-postgres-'));
  await chmod(stateDir, 0o755);
  try {
    const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
    project.provide('sharedPostgresUrl', postgres.url);
    return async () => {
      try {
        await postgres.stop();
      } finally {
        await rm(stateDir, { recursive: true, force: true });
      }
    };
  } catch (error) {
    await rm(stateDir, { recursive: true, force: true });
    throw error;
  }
}
