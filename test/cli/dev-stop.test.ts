import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Connection, Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitTrajectory, trajectoryRequest } from '../../src/client/submit.js';
import { loadDataset } from '../../src/datasets/index.js';
import { freePort } from '../../src/stack/free-port.js';
import { SAMPLE } from '../../src/stack/simulated-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { startRatchet, type RatchetProcess } from '../../scripts/support/ratchet-process.js';
import { alive, listeningPids } from './listening-pids.js';

// Issue 36: after a hung environment step `ratchet dev` ignored SIGTERM for a minute or more (the CPU worker's
// shutdown waited on the step for ever), and a `ratchet dev` SIGKILLed left its Temporal dev server and its
// Postgres running.
const HANG = `import { writeFileSync } from 'node:fs';
export default {
  name: 'hang-forever',
  async reset(task) { return { messages: [{ role: 'user', content: task.problem }] }; },
  async step() { writeFileSync(process.env.HANG_MARKER, 'stepping'); return new Promise(() => undefined); },
};
`;

let scratch: string;
const started: number[] = [];
beforeAll(async () => {
  scratch = await mkdtemp(path.join(os.tmpdir(), 'ratchet-dev-stop-'));
  await chmod(scratch, 0o755);
  await writeFile(path.join(scratch, 'hang.mjs'), HANG);
});
afterAll(async () => {
  // Only on failure: whatever the dev commands left, by the PIDs seen on their ports.
  for (const pid of started) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await rm(scratch, { recursive: true, force: true });
});

/** `ratchet dev` on free ports in a state folder of its own, with the hanging environment; returns once its banner is out. */
async function startDev(name: string): Promise<{ dev: RatchetProcess; temporal: number; postgres: number; marker: string; address: string }> {
  const stateDir = path.join(scratch, name);
  const ports = { temporal: await freePort(), temporalUi: await freePort(), postgres: await freePort(), ui: await freePort() };
  const marker = path.join(scratch, `${name}.stepping`);
  const dev = startRatchet(['dev'], {
    RATCHET_STATE_DIR: stateDir,
    RATCHET_TEMPORAL_PORT: String(ports.temporal),
    RATCHET_TEMPORAL_UI_PORT: String(ports.temporalUi),
    RATCHET_POSTGRES_PORT: String(ports.postgres),
    RATCHET_UI_PORT: String(ports.ui),
    RATCHET_ENVIRONMENTS: path.join(scratch, 'hang.mjs'),
    HANG_MARKER: marker,
    TEMPORAL_ADDRESS: undefined,
    DATABASE_URL: undefined,
    RATCHET_POLICY_URL: undefined,
    RATCHET_UI_URL: undefined,
    RATCHET_METRICS_ADDRESS: undefined,
    LOG_LEVEL: undefined,
  });
  started.push(dev.child.pid!);
  await pollUntil(() => dev.stdout().includes('Ratchet UI'), {
    what: 'ratchet dev to print its banner',
    timeoutMs: 150_000,
    intervalMs: 200,
    abortIf: () => {
      if (dev.child.exitCode !== null) throw new Error(`ratchet dev exited (${dev.child.exitCode}): ${dev.stderr()}`);
    },
  });
  const [temporal] = await listeningPids(ports.temporal);
  const [postgres] = await listeningPids(ports.postgres);
  started.push(temporal!, postgres!);
  return { dev, temporal: temporal!, postgres: postgres!, marker, address: `127.0.0.1:${ports.temporal}` };
}

async function untilGone(pids: number[], timeoutMs: number): Promise<void> {
  await pollUntil(() => pids.every((pid) => !alive(pid)), { what: `pids ${pids.join(', ')} to exit`, timeoutMs, intervalMs: 100 });
}

describe.skipIf(!existsSync('/proc/net/tcp'))('ratchet dev, stopped', () => {
  it('stops within seconds of SIGTERM with a step hung, its Temporal and Postgres with it', async () => {
    const { dev, temporal, postgres, marker, address } = await startDev('sigterm');
    const client = new Client({ connection: await Connection.connect({ address }) });
    try {
      const [problem] = (await loadDataset(SAMPLE)).problems;
      await submitTrajectory(client, trajectoryRequest({ ...problem!, environment: 'hang-forever' }, { trajectoryId: `dev-stop/${problem!.qid}/0` }));
      await pollUntil(() => existsSync(marker), { what: 'the step to hang', timeoutMs: 90_000, intervalMs: 200 });
    } finally {
      await client.connection.close();
    }
    const sent = performance.now();
    dev.child.kill('SIGTERM');
    const timer = setTimeout(() => dev.child.kill('SIGKILL'), 60_000);
    await dev.exited;
    clearTimeout(timer);
    const ms = performance.now() - sent;
    process.stderr.write(`ratchet dev exited ${Math.round(ms)} ms after SIGTERM with a step hung\n`);
    expect(ms, dev.stderr()).toBeLessThan(15_000);
    await untilGone([temporal, postgres], 5_000);
  }, 300_000);

  it('SIGKILLed, leaves neither its Temporal nor its Postgres running', async () => {
    const { dev, temporal, postgres } = await startDev('sigkill');
    dev.child.kill('SIGKILL');
    await dev.exited;
    await untilGone([temporal, postgres], 10_000);
  }, 300_000);
});
