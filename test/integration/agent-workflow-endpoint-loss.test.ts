import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { stopProcess } from '../../src/stack/child-process.js';
import { agentWorkflowId } from '../../src/workflows/agent-workflow-runs.js';
import { startRatchet, stopRatchets, waitUntilPolling, type RatchetProcess } from '../../scripts/support/ratchet-process.js';
import { agentWorkflowRunStatuses, expectServedOnce } from './agent-rows.js';
import { cpuWorkerEnv, startAgentWorkflowWorker, type AgentWorkflowWorker } from './agent-workers.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

// The Ratchet CPU worker that opened an agent workflow's run (its endpoint, its key) is SIGKILLed while the agent's
// model call waits on it. The agent's calls then fail to connect; its activity's retries end (the example tries 5
// times), the child fails, and the trajectory runs the agent again with an endpoint on the CPU worker that took over,
// its calls answered from the store: typed and bounded, not a hang.
const QUEUE = 'test-endpoint-loss-agents';
let stack: TestStack;
let stopGpu: () => Promise<void>;
let folder: string;
let agent: AgentWorkflowWorker | undefined;
const workers: RatchetProcess[] = [];
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-endpoint-loss-'));
  await writeFile(path.join(folder, 'programs.json'), JSON.stringify([{ name: 'wf-calculator', workflow: 'calculatorAgent', taskQueue: QUEUE }]));
  stack = await startTestStack({ seed: 5, tokensPerSecond: 300 });
  stopGpu = await stack.startWorkers({ cpu: false });
  env = cpuWorkerEnv(stack, path.join(folder, 'programs.json'));
  agent = await startAgentWorkflowWorker(stack, QUEUE);
}, 240_000);

afterAll(async () => {
  await stopRatchets(workers);
  if (agent) await stopProcess(agent.child, 3000);
  await stopGpu?.();
  await stack?.stop();
  await rm(folder, { recursive: true, force: true });
});

describe('an agent workflow whose endpoint’s CPU worker is killed', () => {
  it('fails that run, and is run again with a new endpoint: the trajectory completes, no call generated twice', { timeout: 240_000 }, async () => {
    const first = startRatchet(['worker', 'cpu'], env);
    workers.push(first);
    await waitUntilPolling(stack.client, first.child, 'cpu');
    stack.policy.setFaults({ latencyMs: 1500 });
    const problem = stack.problems[0]!;
    const request = trajectoryRequest(
      { ...problem, environment: 'wf-calculator' },
      { trajectoryId: trajectoryId('loss', problem.qid, 0), options: { turns: 6, maxNewTokens: 256 } },
    );
    const running = runRollouts(stack.client, [request]);
    const id = request.trajectoryId;
    await until(async () => {
      const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM turn_outputs WHERE trajectory_id = $1', [id]);
      if (rows[0].n < 1) return false;
      const child = await stack.client.workflow.getHandle(agentWorkflowId(id, 1)).describe();
      return child.raw.pendingActivities?.some((a) => a.activityType?.name === 'callModel' && a.lastStartedTime) ?? false;
    }, 60_000);
    first.child.kill('SIGKILL');
    await first.exited;
    stack.policy.setFaults({ latencyMs: 0 });
    const second = startRatchet(['worker', 'cpu'], env);
    workers.push(second);
    await waitUntilPolling(stack.client, second.child, 'cpu');
    const [result] = await running;
    expect(result!.status).toBe('completed');
    expect(await agentWorkflowRunStatuses(stack, id)).toEqual(['FAILED', 'COMPLETED']);
    const [row] = await stack.exported('loss/');
    expectServedOnce(stack, row!);
  });
});
