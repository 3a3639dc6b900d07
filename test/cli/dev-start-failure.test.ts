import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, isListening } from '../../src/stack/free-port.js';
import { startRatchet } from '../../scripts/support/ratchet-process.js';
import { alive, listeningPids } from './listening-pids.js';

describe.skipIf(!existsSync('/proc/net/tcp'))('ratchet dev that fails to start', () => {
  let stateDir: string;
  let blocker: net.Server;
  const seen = { temporal: new Set<number>(), postgres: new Set<number>() };
  beforeAll(async () => {
    stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-dev-fail-'));
    await chmod(stateDir, 0o755); // the embedded Postgres keeps its data in the state folder, where this test looks
    blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    await new Promise((resolve) => blocker.close(resolve));
    // Only on failure: end what the dev command left, by the PIDs seen on its own ports.
    for (const pid of [...seen.temporal, ...seen.postgres]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    await rm(stateDir, { recursive: true, force: true });
  });

  it('exits non-zero naming the taken UI port, and stops the Temporal and Postgres it started', async () => {
    const ports = {
      temporal: await freePort(),
      temporalUi: await freePort(),
      postgres: await freePort(),
      ui: (blocker.address() as net.AddressInfo).port,
    };
    const dev = startRatchet(['dev'], {
      RATCHET_STATE_DIR: stateDir,
      RATCHET_TEMPORAL_PORT: String(ports.temporal),
      RATCHET_TEMPORAL_UI_PORT: String(ports.temporalUi),
      RATCHET_POSTGRES_PORT: String(ports.postgres),
      RATCHET_UI_PORT: String(ports.ui),
      TEMPORAL_ADDRESS: undefined,
      DATABASE_URL: undefined,
      RATCHET_POLICY_URL: undefined,
      RATCHET_UI_URL: undefined,
      RATCHET_METRICS_ADDRESS: undefined,
    });
    let running = true;
    const watching = (async () => {
      while (running) {
        for (const pid of await listeningPids(ports.temporal)) seen.temporal.add(pid);
        for (const pid of await listeningPids(ports.postgres)) seen.postgres.add(pid);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    const code = await dev.exited;
    running = false;
    await watching;

    expect(code).not.toBe(0);
    expect(dev.stderr()).toMatch(new RegExp(`port ${ports.ui} is taken.*RATCHET_UI_PORT`));
    expect(seen.temporal.size).toBeGreaterThan(0);
    expect(seen.postgres.size).toBeGreaterThan(0);
    expect([...seen.temporal, ...seen.postgres].filter(alive)).toEqual([]);
    expect(await isListening(ports.temporal)).toBe(false);
    expect(await isListening(ports.postgres)).toBe(false);
    expect(existsSync(path.join(stateDir, 'postgres', 'postmaster.pid'))).toBe(false);
  }, 180_000);
});
