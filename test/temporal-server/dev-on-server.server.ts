import { chmod, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRatchet, stopRatchets, type RatchetProcess } from '../../scripts/support/ratchet-process.js';
import { freePort, isListening } from '../../src/stack/free-port.js';
import { ensureTemporalServer } from '../../src/stack/temporal-server.js';

const DATASET = path.resolve('data/sample.jsonl');

// `ratchet dev --temporal server`: the whole demo stack (workers, controller, simulated policy, UI) on the Temporal
// server users deploy, and a second terminal in the same folder running trajectories through it.
describe('ratchet dev --temporal server', () => {
  let stateDir: string;
  let dev: RatchetProcess | undefined;
  let env: NodeJS.ProcessEnv;
  let temporalPort: number;

  beforeAll(async () => {
    // The binaries `npm run setup:temporal-server` built, shared through the state folder (no rebuild).
    const built = path.resolve('.ratchet', 'tools');
    await ensureTemporalServer(path.resolve('.ratchet'));
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-dev-server-'));
    await chmod(stateDir, 0o755); // both Postgres data folders then stay in it, and go with it
    await symlink(built, path.join(stateDir, 'tools'));
    temporalPort = await freePort();
    env = {
      RATCHET_STATE_DIR: stateDir,
      RATCHET_TEMPORAL_PORT: String(temporalPort),
      RATCHET_TEMPORAL_UI_PORT: String(await freePort()),
      RATCHET_POSTGRES_PORT: String(await freePort()),
      RATCHET_UI_PORT: String(await freePort()),
      TEMPORAL_ADDRESS: undefined,
      DATABASE_URL: undefined,
      RATCHET_POLICY_URL: undefined,
      RATCHET_UI_URL: undefined,
      RATCHET_METRICS_ADDRESS: undefined,
    };
  });
  afterAll(async () => {
    if (dev) await stopRatchets([dev], 30_000);
    await rm(stateDir, { recursive: true, force: true });
  });

  it('runs the demo on a Postgres-backed Temporal, and stops it all on SIGINT', async () => {
    dev = startRatchet(['dev', '--temporal', 'server'], env);
    const started = Date.now();
    while (!dev.stdout().includes('Ctrl-C stops everything')) {
      const exited = await Promise.race([dev.exited, new Promise((resolve) => setTimeout(() => resolve(undefined), 250))]);
      if (exited !== undefined) throw new Error(`ratchet dev exited (${String(exited)}): ${dev.stderr()}`);
      if (Date.now() - started > 150_000) throw new Error(`ratchet dev did not start within 150 s: ${dev.stderr()}`);
    }
    expect(dev.stdout()).toContain(`Temporal      127.0.0.1:${temporalPort}`);

    // The server it started keeps history and visibility in Postgres, not the dev server's SQLite.
    const connection = await Connection.connect({ address: `127.0.0.1:${temporalPort}` });
    try {
      const info = await connection.workflowService.getClusterInfo({});
      expect(info.persistenceStore).toBe('postgres12');
      expect(info.visibilityStore).toBe('postgres12');
    } finally {
      await connection.close();
    }

    const run = startRatchet(['run', '--submit-only', '--dataset', DATASET, '--limit', '6', '--run-name', 'dev-on-server'], env);
    expect(await run.exited, run.stderr()).toBe(0);
    expect(run.stdout()).toMatch(/trajectories\s+6 \(6 completed, 0 failed\)/);

    dev.child.kill('SIGINT');
    expect(await dev.exited).toBe(0);
    dev = undefined;
    expect(await isListening(temporalPort)).toBe(false);
  }, 300_000);
});
