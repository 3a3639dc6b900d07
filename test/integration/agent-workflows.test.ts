import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProgram } from '../../src/agent/program-host.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { stopProcess } from '../../src/stack/child-process.js';
import { agentWorkflowId } from '../../src/workflows/agent-workflow-runs.js';
import { agentWorkflowRunStatuses, expectServedOnce } from './agent-rows.js';
import { startAgentWorkflowWorker, type AgentWorkflowWorker } from './agent-workers.js';
import { expectEnvironmentInvariants, storedSteps } from './environment-rows.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

// Agents that are Temporal workflows, run as their trajectory's child by the user's own worker: the example's worker is
// a separate process (started with vite-node, as a user would run it), the failing fixtures an in-process worker.
const AGENT_QUEUE = 'test-calculator-agents';
const FIXTURE_QUEUE = 'test-agent-workflow-fixtures';

let stack: TestStack;
let stopWorkers: () => Promise<void>;
let agentWorker: AgentWorkflowWorker | undefined;
let fixtures: { connection: NativeConnection; worker: Worker; running: Promise<void> } | undefined;

const PROGRAMS: AgentProgram[] = [
  { name: 'wf-calculator', workflow: 'calculatorAgent', taskQueue: AGENT_QUEUE },
  { name: 'wf-fails', workflow: 'failingAgent', taskQueue: FIXTURE_QUEUE },
  { name: 'wf-garbage', workflow: 'garbageAgent', taskQueue: FIXTURE_QUEUE },
  { name: 'wf-silent', workflow: 'silentAgent', taskQueue: FIXTURE_QUEUE },
  { name: 'wf-hangs', workflow: 'hangingAgent', taskQueue: FIXTURE_QUEUE },
  { name: 'wf-unpolled', workflow: 'calculatorAgent', taskQueue: 'a-queue-no-worker-polls' },
];

async function startAgentWorker(): Promise<void> {
  agentWorker = await startAgentWorkflowWorker(stack, AGENT_QUEUE);
}

beforeAll(async () => {
  stack = await startTestStack({ seed: 13, tokensPerSecond: 400 });
  const startFixtures = async () => {
    const connection = await NativeConnection.connect({ address: stack.temporalAddress });
    const worker = await Worker.create({
      connection,
      taskQueue: FIXTURE_QUEUE,
      workflowsPath: path.join(import.meta.dirname, 'fixtures/agents/agent-workflows.ts'),
    });
    fixtures = { connection, worker, running: worker.run() };
  };
  const ratchetWorkers = stack.startWorkers({ agentPrograms: PROGRAMS }).then((stop) => (stopWorkers = stop));
  // The fixtures' bundle is built in this process and blocks its event loop for seconds: not while Ratchet's workers
  // connect (a connect timed out that way under load), so after them; the example's worker is a process of its own.
  await Promise.all([ratchetWorkers.then(startFixtures), startAgentWorker()]);
}, 240_000);

afterEach(({ task }) => {
  if (task.result?.state === 'fail') console.error(`--- agent worker log ---\n${agentWorker?.log()}`);
});

afterAll(async () => {
  if (agentWorker) await stopProcess(agentWorker.child, 3_000);
  if (fixtures) {
    fixtures.worker.shutdown();
    await fixtures.running;
    await fixtures.connection.close();
  }
  await stopWorkers?.();
  await stack?.stop();
});

function requests(run: string, environment: string, count: number, timeouts = {}) {
  return stack.problems.slice(0, count).map((problem) => ({
    ...trajectoryRequest({ ...problem, environment }, { trajectoryId: trajectoryId(run, problem.qid, 0), options: { turns: 6, maxNewTokens: 256 } }),
    timeouts,
  }));
}

describe('agents that are Temporal workflows', () => {
  it(
    'runs the example as the trajectory’s child: every model call a turn generated once, tools as activities, the answer judged',
    { timeout: 120_000 },
    async () => {
      const results = await runRollouts(stack.client, requests('agent-wf', 'wf-calculator', 3));
      expect(results.map((r) => r.status)).toEqual(Array(3).fill('completed'));
      const rows = await stack.exported('agent-wf/');
      expect(rows).toHaveLength(3);
      for (const row of rows) {
        const steps = await storedSteps(stack.pool, row.trajectory_id);
        expectEnvironmentInvariants(row, stack.tokenizer, steps);
        expectServedOnce(stack, row);
        expect(['correct', 'wrong', 'no_answer']).toContain(steps.at(-1)!.verdict);
        for (const step of steps.slice(0, -1)) expect(['tool_calls', 'malformed_tool_call']).toContain(step.verdict);
        expect(await agentWorkflowRunStatuses(stack, row.trajectory_id)).toEqual(['COMPLETED']);
      }
      expect(rows.some((row) => row.seqlens.length > 1)).toBe(true);
    },
  );

  it(
    'the agent’s worker SIGKILLed during a model call and restarted: the trajectory completes once, in one run, nothing generated twice',
    { timeout: 120_000 },
    async () => {
      // Slow turns, so that the kill lands while a model call waits for its turn.
      stack.policy.setFaults({ latencyMs: 1500 });
      try {
        const [request] = requests('agent-wf-kill', 'wf-calculator', 1);
        const id = request!.trajectoryId;
        const running = runRollouts(stack.client, [request!]);
        // Killed after a turn was generated, while a model call is started on the worker (its answer lost with it).
        await until(async () => {
          const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM turn_outputs WHERE trajectory_id = $1', [id]);
          if (rows[0].n < 1) return false;
          const child = await stack.client.workflow.getHandle(agentWorkflowId(id, 1)).describe();
          return child.raw.pendingActivities?.some((a) => a.activityType?.name === 'callModel' && a.attempt === 1 && a.lastStartedTime) ?? false;
        }, 60_000);
        agentWorker!.child.kill('SIGKILL');
        await new Promise((resolve) => agentWorker!.child.once('exit', resolve));
        stack.policy.setFaults({ latencyMs: 0 });
        await startAgentWorker();
        const [result] = await running;
        expect(result!.status).toBe('completed');
        const [row] = await stack.exported('agent-wf-kill/');
        expectEnvironmentInvariants(row!, stack.tokenizer, await storedSteps(stack.pool, id));
        expectServedOnce(stack, row!);
        // One run of the agent: its worker came back and went on; the model call it was making was made again.
        expect(await agentWorkflowRunStatuses(stack, id)).toEqual(['COMPLETED']);
        const history = await stack.client.workflow.getHandle(agentWorkflowId(id, 1)).fetchHistory();
        const types = new Map(history.events!.map((e) => [String(e.eventId), e.activityTaskScheduledEventAttributes?.activityType?.name]));
        const callsAgain = history.events!.filter((e) => {
          const started = e.activityTaskStartedEventAttributes;
          return started && started.attempt! > 1 && types.get(String(started.scheduledEventId)) === 'callModel';
        });
        // At most the call in flight was made again (and answered from the store: nothing was generated twice). Under
        // load its history sometimes shows no call made again although the kill was seen to land during one: not
        // explained yet (closing note of stop 43), so not asserted.
        expect(callsAgain.length).toBeLessThanOrEqual(1);
        const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM trajectories WHERE trajectory_id = $1', [id]);
        expect(rows[0].n).toBe(1);
      } finally {
        stack.policy.setFaults({ latencyMs: 0 });
      }
    },
  );

  it(
    'a child that fails, returns garbage, never calls, hangs or has no worker ends its trajectory typed, within its bound',
    { timeout: 60_000 },
    async () => {
      const started = performance.now();
      const results = await runRollouts(stack.client, [
        ...requests('agent-wf-fails', 'wf-fails', 1),
        ...requests('agent-wf-garbage', 'wf-garbage', 1),
        ...requests('agent-wf-silent', 'wf-silent', 1),
        ...requests('agent-wf-hangs', 'wf-hangs', 1, { agentProgramSeconds: 1 }),
        ...requests('agent-wf-unpolled', 'wf-unpolled', 1),
      ]);
      expect(results.map((r) => r.status)).toEqual(Array(5).fill('failed'));
      expect(performance.now() - started).toBeLessThan(30_000);
      const { rows } = await stack.pool.query(
        "SELECT trajectory_id, failure_type, error FROM trajectories WHERE trajectory_id LIKE 'agent-wf-%' AND status = 'failed' AND trajectory_id NOT LIKE 'agent-wf-kill%' ORDER BY 1",
      );
      const byRun = Object.fromEntries(rows.map((row) => [row.trajectory_id.split('/')[0], row]));
      expect(byRun['agent-wf-fails']).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(byRun['agent-wf-fails'].error).toContain('boom: the agent workflow gave up');
      expect(await agentWorkflowRunStatuses(stack, byRun['agent-wf-fails'].trajectory_id)).toEqual(['FAILED', 'FAILED', 'FAILED']);
      expect(byRun['agent-wf-garbage']).toMatchObject({ failure_type: 'AgentResultInvalid' });
      expect(byRun['agent-wf-garbage'].error).toContain('score');
      expect(byRun['agent-wf-silent']).toMatchObject({ failure_type: 'AgentMadeNoCall' });
      expect(byRun['agent-wf-hangs']).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(byRun['agent-wf-hangs'].error).toContain('ran past its 1 s (agentProgramSeconds)');
      // A queue nobody polls (a typo, a worker never started) is refused when the run opens, not waited out 3 times.
      expect(byRun['agent-wf-unpolled']).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(byRun['agent-wf-unpolled'].error).toContain('no worker polls task queue a-queue-no-worker-polls');
      expect(await agentWorkflowRunStatuses(stack, byRun['agent-wf-unpolled'].trajectory_id)).toEqual([]);
    },
  );
});
