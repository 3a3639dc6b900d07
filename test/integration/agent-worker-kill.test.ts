import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { startRatchet, stopRatchets, waitUntilPolling, type RatchetProcess } from '../../scripts/support/ratchet-process.js';
import { cpuWorkerEnv } from './agent-workers.js';
import { expectEnvironmentInvariants, storedSteps } from './environment-rows.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

// The CPU worker that runs an agent program is SIGKILLed mid-episode, with the workflow, the program's endpoint and
// the program's run on it. Another CPU worker takes over: the workflow replays, the program activity's heartbeats
// stop (30 s), it is run again there, and its calls are answered from the store.
const ROOT = path.resolve(import.meta.dirname, '../..');

let stack: TestStack;
let stopGpu: () => Promise<void>;
let folder: string;
let env: NodeJS.ProcessEnv;
const workers: RatchetProcess[] = [];
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

beforeAll(async () => {
  const python = await pythonPackageEnv(path.join(ROOT, '.ratchet'));
  folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-agent-kill-'));
  const pidFile = path.join(folder, 'program.pid');
  // The program writes its PID, then becomes the Python example (exec): the test watches exactly that process.
  const command = ['/bin/sh', '-c', `echo $$ >> "${pidFile}" && exec "$0" "$@"`, python, path.join(ROOT, 'examples/agents/calculator_agent.py')];
  await writeFile(path.join(folder, 'programs.json'), JSON.stringify([{ name: 'py-calculator', command, cwd: ROOT }]));
  stack = await startTestStack({ seed: 5, tokensPerSecond: 300 });
  stopGpu = await stack.startWorkers({ cpu: false });
  env = cpuWorkerEnv(stack, path.join(folder, 'programs.json'));
}, 240_000);

afterEach(({ task }) => {
  if (task.result?.state !== 'fail') return;
  for (const worker of workers) console.error(`--- cpu worker pid ${worker.child.pid} stderr ---\n${worker.stderr()}`);
});

afterAll(async () => {
  await stopRatchets(workers);
  const pids = await readFile(path.join(folder, 'program.pid'), 'utf8').catch(() => '');
  for (const pid of pids.split('\n').filter(Boolean).map(Number)) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await stopGpu?.();
  await stack?.stop();
  await rm(folder, { recursive: true, force: true });
});

async function cpuWorker(): Promise<RatchetProcess> {
  const worker = startRatchet(['worker', 'cpu'], env);
  workers.push(worker);
  await waitUntilPolling(stack.client, worker.child, 'cpu');
  return worker;
}

describe('an agent program whose CPU worker is killed', () => {
  it('is run again on another worker: the trajectory completes once, no call generated twice', { timeout: 240_000 }, async () => {
    const first = await cpuWorker();
    const problem = stack.problems[0]!;
    const request = trajectoryRequest(
      { ...problem, environment: 'py-calculator' },
      { trajectoryId: trajectoryId('agent-worker-kill', problem.qid, 0), options: { turns: 6, maxNewTokens: 256 } },
    );
    const running = runRollouts(stack.client, [request]);
    await until(async () => {
      const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM turn_outputs WHERE trajectory_id = $1', [request.trajectoryId]);
      return rows[0].n >= 2;
    }, 60_000);
    const [orphan] = (await readFile(path.join(folder, 'program.pid'), 'utf8')).split('\n').filter(Boolean).map(Number);
    first.child.kill('SIGKILL');
    await first.exited;
    await cpuWorker();
    const [result] = await running;
    expect(result!.status).toBe('completed');

    // The orphaned program lost its endpoint: its next call failed and it exited by itself.
    await until(() => !alive(orphan!), 60_000);
    const [row] = await stack.exported('agent-worker-kill/');
    expectEnvironmentInvariants(row!, stack.tokenizer, await storedSteps(stack.pool, request.trajectoryId));
    const served = stack.policy.stats().recent.filter((r) => r.rid.startsWith(`${request.trajectoryId}/`) && r.end !== 'disconnect');
    expect(served).toHaveLength(row!.seqlens.length);
    const history = await stack.client.workflow.getHandle(request.trajectoryId).fetchHistory();
    const programRuns = history.events!.filter((e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1);
    expect(programRuns.length).toBeGreaterThanOrEqual(1);
    const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM trajectories WHERE trajectory_id = $1', [request.trajectoryId]);
    expect(rows[0].n).toBe(1);
  });
});
