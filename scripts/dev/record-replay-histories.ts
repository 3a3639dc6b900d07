// Records workflow histories from real runs for the replay test:
// `npx vite-node scripts/dev/record-replay-histories.ts [case ...]` (every case whose file does not exist yet).
// A committed history is never re-recorded: it is how CI proves that trajectories started by that release still
// replay after a deploy. A release that changes the workflow adds cases (and files) of its own.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { AgentProgram } from '../../src/agent/program-host.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { environmentTaskQueue } from '../../src/environments/environment-set.js';
import { createBackend } from '../../src/policy/backend-config.js';
import { loadDataset } from '../../src/datasets/index.js';
import { submitTrajectory, trajectoryRequests } from '../../src/client/submit.js';
import { localTemporalCliPath } from '../../src/stack/temporal-cli.js';
import { pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { CPU_TASK_QUEUE } from '../../src/task-queues.js';
import { startSimulatedStack, type SimulatedStack } from '../../src/stack/simulated-stack.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const out = path.join(ROOT, 'test/replay/histories');
/** Where the killable agent program writes its PID (test/integration/agent-programs.test.ts's trick). */
const AGENT_PID_FILE = path.join(os.tmpdir(), `ratchet-record-agent-pid-${process.pid}`);

/**
 * The agent programs the recording's CPU worker runs (release 8): the two examples, the Python one forgetting its
 * reasoning (a fork), the Python one started through a PID file (to be killed), and one that exits 1 every run.
 */
function agentPrograms(python: string): AgentProgram[] {
  const calculator = [python, path.join(ROOT, 'examples/agents/calculator_agent.py')];
  return [
    { name: 'ts-calculator', command: [process.execPath, path.join(ROOT, 'examples/agents/ts-agent.mjs')] },
    { name: 'py-calculator', command: calculator },
    { name: 'py-forgetful', command: calculator, env: { CALCULATOR_AGENT_FORGET_REASONING: '1' } },
    { name: 'py-killable', command: ['/bin/sh', '-c', `echo $$ > "${AGENT_PID_FILE}" && exec "$0" "$@"`, ...calculator] },
    { name: 'exits-1', command: [process.execPath, '-e', 'console.error("the agent gave up"); process.exit(1)'] },
    { name: 'wf-calculator', workflow: 'calculatorAgent', taskQueue: AGENT_WORKFLOW_QUEUES.example },
    { name: 'wf-fails', workflow: 'failingAgent', taskQueue: AGENT_WORKFLOW_QUEUES.fixtures },
  ];
}

/** The task queues of the agent workflows' own workers (the user's, in a deployment), started by their cases. */
const AGENT_WORKFLOW_QUEUES = { example: 'replay-calculator-agents', fixtures: 'replay-agent-workflow-fixtures' };

/** The recording's workers, which a case may stop and replace (to leave a trajectory's server behind). */
interface RecordingWorkers {
  restartGpu(backendUrl?: string): Promise<void>;
  stopCpu(): Promise<void>;
  startCpu(): Promise<void>;
}

/** Each case runs trajectories and returns the histories to keep: file name → workflow id and run. */
type Recording = (stack: SimulatedStack, name: string, workers: RecordingWorkers) => Promise<Record<string, { workflowId: string; runId?: string }>>;

const plain =
  (options: Partial<RolloutOptions>): Recording =>
  async (stack, name) => {
    const [request] = trajectoryRequests(`replay-${name}`, stack.problems.slice(0, 1), 1, options);
    const { handle } = await submitTrajectory(stack.client, request!);
    await handle.result().catch(() => undefined);
    return { [name]: { workflowId: handle.workflowId } };
  };

const grouped =
  (options: Partial<RolloutOptions>): Recording =>
  async (stack, name) => {
    const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
    const run = { runId: `replay-${name}`, maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
    const groups = await client.submit(run, stack.problems.slice(3, 4), { samples: 1, rollout: options });
    await client.wait(groups);
    return { [name]: { workflowId: groups[0]!.trajectoryIds[0]! } };
  };

/** A group kept queued (one group at a time, no version published) until it has continued as new twice. */
const continuedWhileQueued: Recording = async (stack, name) => {
  const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
  const run = { runId: `replay-${name}`, maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
  const groups = await client.submit(run, stack.problems.slice(4, 6), {
    samples: 1,
    rollout: { turns: 1 },
    timeouts: { admissionRecheckSeconds: 1, admissionRecheckMaxSeconds: 2, admissionRechecksPerRun: 3 },
  });
  // The controller admits one of the two first (its choice); the other is the one to record.
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const handles = groups.map((group) => stack.client.workflow.getHandle(group.trajectoryIds[0]!));
  const phases = await Promise.all(handles.map(async (handle) => (await handle.query<{ phase: string }>('state')).phase));
  const queued = handles[phases.indexOf('queued')]!;
  const firstRunId = (await queued.describe()).runId;
  const runs = new Set([firstRunId]);
  while (runs.size < 3) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    runs.add((await queued.describe()).runId);
  }
  await publishPolicyVersion(stack.pool, 1);
  await client.wait(groups);
  return { [`${name}-first-run`]: { workflowId: queued.workflowId, runId: firstRunId }, [`${name}-last-run`]: { workflowId: queued.workflowId } };
};

/** A group cancelled while queued: the workflow's failure path runs (release 4 checks its patch there). */
const cancelledWhileQueued: Recording = async (stack, name) => {
  const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
  const run = { runId: `replay-${name}`, maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
  const groups = await client.submit(run, stack.problems.slice(6, 8), { samples: 1, rollout: { turns: 1 } });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const handles = groups.map((group) => stack.client.workflow.getHandle(group.trajectoryIds[0]!));
  const phases = await Promise.all(handles.map(async (handle) => (await handle.query<{ phase: string }>('state')).phase));
  const queued = phases.indexOf('queued');
  await client.cancel({ groupId: groups[queued]!.groupId });
  await handles[queued]!.result().catch(() => undefined);
  await publishPolicyVersion(stack.pool, 1);
  return { [name]: { workflowId: handles[queued]!.workflowId } };
};

/** Started around every client check, as `temporal workflow start` would: a non-numeric timeout. */
const invalidRequest: Recording = async (stack, name) => {
  const handle = await stack.client.workflow.start('trajectory', {
    taskQueue: CPU_TASK_QUEUE,
    workflowId: `replay-${name}/q/0`,
    args: [{ trajectoryId: `replay-${name}/q/0`, qid: 'q', problem: 'What is 1+1?', gold: ['2'], timeouts: { generateHeartbeatSeconds: 'soon' } }],
  });
  await handle.result().catch(() => undefined);
  return { [name]: { workflowId: handle.workflowId } };
};

/** A group member with an invalid option: it fails, yet takes its place, and its sibling completes the group. */
const invalidGroupMember: Recording = async (stack, name) => {
  const run = { runId: `replay-${name}`, maxHeadOffpolicyness: 8, batchSize: 1, maxConcurrent: 1 };
  const groupId = `replay-${name}/q`;
  const [problem] = stack.problems;
  const member = (sample: number, turns: number) => ({
    trajectoryId: `${groupId}/${sample}`,
    qid: 'q',
    problem: problem!.problem,
    gold: problem!.gold,
    options: { turns },
    group: { run, groupId, size: 2, sample },
  });
  const handles = await Promise.all(
    [member(0, 1), member(1, 0)].map((request) =>
      stack.client.workflow.start('trajectory', {
        taskQueue: CPU_TASK_QUEUE,
        workflowId: request.trajectoryId,
        args: [request],
      }),
    ),
  );
  await Promise.all(handles.map((handle) => handle.result().catch(() => undefined)));
  return { [name]: { workflowId: handles[1]!.workflowId } };
};

/** A code task (the simulated policy does not know this problem, so its answers carry no code: `no_answer`). */
const codeTask: Recording = async (stack, name) => {
  const { problems } = await loadDataset(path.resolve(import.meta.dirname, '../../data/code-sample.jsonl'), { limit: 1 });
  const [request] = trajectoryRequests(`replay-${name}`, problems, 1, { turns: 2 });
  const { handle } = await submitTrajectory(stack.client, request!);
  await handle.result().catch(() => undefined);
  return { [name]: { workflowId: handle.workflowId } };
};

/** A trajectory in an environment of the CPU worker's own (math-python-tool: the simulated policy writes no code, so no tool call). */
const inEnvironment =
  (environment: string, options: Partial<RolloutOptions>): Recording =>
  async (stack, name) => {
    const [request] = trajectoryRequests(`replay-${name}`, stack.problems.slice(0, 1), 1, options);
    const { handle } = await submitTrajectory(stack.client, { ...request!, environment });
    await handle.result().catch(() => undefined);
    return { [name]: { workflowId: handle.workflowId } };
  };

/**
 * An environment served on its own task queue, as Python's `ratchet-env serve` serves one: here a two-turn game
 * answered by a TypeScript worker speaking the same activities, so that recording needs no Python.
 */
const remoteEnvironment: Recording = async (stack, name) => {
  const connection = await NativeConnection.connect({ address: stack.temporalAddress });
  const worker = await Worker.create({
    connection,
    taskQueue: environmentTaskQueue('replay-game'),
    activities: {
      environmentReset: async () => ({ messages: [{ role: 'user', content: 'Say a number from 1 to 3.' }], state: { guesses: 0 } }),
      environmentStep: async (input: { turn: number; state: { guesses: number } }) => ({
        observations: [{ role: 'tool', content: input.turn === 0 ? 'too low' : 'correct' }],
        reward: input.turn === 0 ? 0 : 1,
        success: input.turn > 0,
        done: input.turn > 0,
        verdict: input.turn === 0 ? 'too_low' : 'correct',
        info: { guess: input.turn },
        state: { guesses: input.state.guesses + 1 },
      }),
    },
  });
  const running = worker.run();
  try {
    const handle = await stack.client.workflow.start('trajectory', {
      taskQueue: CPU_TASK_QUEUE,
      workflowId: `replay-${name}/q/0`,
      args: [
        {
          trajectoryId: `replay-${name}/q/0`,
          qid: 'q',
          problem: 'Guess the number.',
          gold: [],
          environment: 'replay-game',
          environmentArgs: { high: 3 },
          options: { turns: 3 },
        },
      ],
    });
    await handle.result().catch(() => undefined);
    return { [name]: { workflowId: handle.workflowId } };
  } finally {
    worker.shutdown();
    await running;
    await connection.close();
  }
};

/**
 * Turn affinity's fallback: turn 1 runs on a server whose worker is then stopped (the same simulated policy, named by
 * `localhost` instead of `127.0.0.1`, is another server to Ratchet), so turn 2 waits `affinityFallbackSeconds` on
 * that server's queue and runs on the shared one. The CPU worker is stopped meanwhile, so that turn 2 is not sent
 * before that server's worker is gone.
 */
const affinityFallback: Recording = async (stack, name, workers) => {
  await workers.restartGpu(stack.policy.url.replace('127.0.0.1', 'localhost'));
  const [request] = trajectoryRequests(`replay-${name}`, stack.problems.slice(0, 1), 1, { turns: 2 });
  const { handle } = await submitTrajectory(stack.client, { ...request!, timeouts: { affinityFallbackSeconds: 1 } });
  const firstTurnDone = async () => (await handle.fetchHistory()).events?.some((event) => event.activityTaskCompletedEventAttributes) ?? false;
  while ((await handle.query<{ phase: string }>('state')).phase !== 'generating') await new Promise((resolve) => setTimeout(resolve, 20));
  await workers.stopCpu();
  while (!(await firstTurnDone())) await new Promise((resolve) => setTimeout(resolve, 50));
  await workers.restartGpu();
  await workers.startCpu();
  await handle.result().catch(() => undefined);
  return { [name]: { workflowId: handle.workflowId } };
};

const AGENT_OPTIONS: Partial<RolloutOptions> = { turns: 6, maxNewTokens: 256 };

/** A running trajectory's generate activities: how many ended, and how many are scheduled and not yet ended. */
async function generates(handle: Awaited<ReturnType<typeof submitTrajectory>>['handle']): Promise<{ ended: number; inFlight: number }> {
  const events = (await handle.fetchHistory()).events ?? [];
  const scheduled = new Set(
    events.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'generate').map((e) => String(e.eventId)),
  );
  const ended = events
    .map(
      (e) =>
        e.activityTaskCompletedEventAttributes ??
        e.activityTaskFailedEventAttributes ??
        e.activityTaskTimedOutEventAttributes ??
        e.activityTaskCanceledEventAttributes,
    )
    .filter((attributes) => attributes && scheduled.has(String(attributes.scheduledEventId))).length;
  return { ended, inFlight: scheduled.size - ended };
}

/** A finished trajectory's turns (one per model call of an agent program), and how many of its steps recorded a fork. */
async function storedTurns(stack: SimulatedStack, trajectoryId: string): Promise<{ turns: number; forks: number }> {
  const { rows } = await stack.pool.query<{ turns: number; forks: number }>(
    `SELECT (SELECT num_turns FROM trajectories WHERE trajectory_id = $1) AS turns,
            (SELECT count(*)::int FROM turn_texts WHERE trajectory_id = $1 AND environment_step->'info' ? 'fork') AS forks`,
    [trajectoryId],
  );
  return { turns: rows[0]?.turns ?? 0, forks: rows[0]?.forks ?? 0 };
}

async function storedStatus(stack: SimulatedStack, trajectoryId: string): Promise<{ status: string; failure_type: string | null } | undefined> {
  const { rows } = await stack.pool.query<{ status: string; failure_type: string | null }>(
    'SELECT status, failure_type FROM trajectories WHERE trajectory_id = $1',
    [trajectoryId],
  );
  return rows[0];
}

/**
 * Trajectories run by an agent program (release 8), one per problem; keeps the completed one with the most turns
 * (tool calls answered over several turns), of those with a recorded fork when `fork` asks for one.
 */
const agentEpisode =
  (environment: string, count: number, { fork = false, minTurns = 3 } = {}): Recording =>
  async (stack, name) => {
    const requests = trajectoryRequests(`replay-${name}`, stack.problems.slice(0, count), 1, AGENT_OPTIONS).map((request) => ({
      ...request,
      environment,
    }));
    const handles = await Promise.all(requests.map(async (request) => (await submitTrajectory(stack.client, request)).handle));
    await Promise.all(handles.map((handle) => handle.result().catch(() => undefined)));
    const runs = await Promise.all(
      handles.map(async (handle) => ({
        workflowId: handle.workflowId,
        ...(await storedTurns(stack, handle.workflowId)),
        status: (await storedStatus(stack, handle.workflowId))?.status,
      })),
    );
    const kept = runs
      .filter((run) => run.status === 'completed' && run.turns >= minTurns && (!fork || run.forks > 0))
      .sort((a, b) => b.turns - a.turns)[0];
    if (!kept) throw new Error(`${name}: no completed trajectory of ${minTurns}+ turns${fork ? ' with a fork' : ''}: ${JSON.stringify(runs)}`);
    console.log(`${name}: ${kept.workflowId}, ${kept.turns} turns, ${kept.forks} forks`);
    return { [name]: { workflowId: kept.workflowId } };
  };

/**
 * The Python agent SIGKILLed while a later call's turn is generating (after an earlier call was answered; the policy
 * slowed so that there is such a moment), its update still open; run again, its earlier calls answered from the
 * store, completed. Tries problem after problem until one is killed that way and completes.
 */
const agentKilled: Recording = async (stack, name) => {
  stack.policy.setFaults({ latencyMs: 1500 });
  try {
    for (const [i, problem] of stack.problems.slice(0, 6).entries()) {
      await rm(AGENT_PID_FILE, { force: true });
      const [request] = trajectoryRequests(`replay-${name}-${i}`, [problem], 1, AGENT_OPTIONS);
      const { handle } = await submitTrajectory(stack.client, { ...request!, environment: 'py-killable' });
      const id = handle.workflowId;
      let killed = false;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline) {
        const [{ ended, inFlight }, status] = await Promise.all([generates(handle), storedStatus(stack, id)]);
        if (status) break;
        if (ended >= 1 && inFlight >= 1) {
          const pid = Number((await readFile(AGENT_PID_FILE, 'utf8')).trim());
          try {
            process.kill(pid, 'SIGKILL');
            killed = true;
          } catch {
            // Gone already: the episode ended.
          }
          break;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      const runs = history.events!.filter((e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt! > 1).length;
      const status = await storedStatus(stack, id);
      console.log(`${name}: ${id} killed ${killed}, later runs ${runs}, ${status?.status}`);
      if (killed && status?.status === 'completed' && runs > 0) return { [name]: { workflowId: id } };
    }
    throw new Error(`${name}: no episode was killed mid-way and completed`);
  } finally {
    stack.policy.setFaults({ latencyMs: 0 });
    await rm(AGENT_PID_FILE, { force: true });
  }
};

/** A program that exits 1 every run: after its runs the trajectory fails typed AgentProgramFailed. */
const agentFailed: Recording = (stack, name) => agentFailedAs('exits-1', name, stack);

async function agentFailedAs(environment: string, name: string, stack: SimulatedStack): Promise<Record<string, { workflowId: string }>> {
  const [request] = trajectoryRequests(`replay-${name}`, stack.problems.slice(0, 1), 1, AGENT_OPTIONS);
  const { handle } = await submitTrajectory(stack.client, { ...request!, environment });
  await handle.result().catch(() => undefined);
  const status = await storedStatus(stack, handle.workflowId);
  if (status?.failure_type !== 'AgentProgramFailed') throw new Error(`${name}: ended ${JSON.stringify(status)}, not AgentProgramFailed`);
  return { [name]: { workflowId: handle.workflowId } };
}

/**
 * An agent that is a Temporal workflow, run as the trajectory's child (release 8): the example (examples/agents/
 * workflow-agent/) completing with tool calls, or a fixture failing on every run, on a worker of its own as the user's.
 */
const agentWorkflow =
  (environment: 'wf-calculator' | 'wf-fails'): Recording =>
  async (stack, name, workers) => {
    const example = environment === 'wf-calculator';
    const connection = await NativeConnection.connect({ address: stack.temporalAddress });
    const worker = await Worker.create({
      connection,
      taskQueue: example ? AGENT_WORKFLOW_QUEUES.example : AGENT_WORKFLOW_QUEUES.fixtures,
      workflowsPath: path.join(ROOT, example ? 'examples/agents/workflow-agent/workflow.ts' : 'test/integration/fixtures/agents/agent-workflows.ts'),
      activities: example ? await import('../../examples/agents/workflow-agent/activities.js') : {},
    });
    const running = worker.run();
    try {
      if (example) return await agentEpisode(environment, 6)(stack, name, workers);
      return await agentFailedAs(environment, name, stack);
    } finally {
      worker.shutdown();
      await running;
      await connection.close();
    }
  };

// Release 1 (grouped admission): recorded once, never again.
// Release 2 (request schema, admission back-off with continue-as-new, typed failures): `r2-*`.
// Release 3 (local steps, the environment step, the request checked in a local activity, code tasks): `r3-*`;
// `r3-invalid-group-member` came later in release 3 (the failure carries the group: an activity input, no patch).
// Release 4 (the stored row decides how the workflow ends: persist not cancellable, patch `stored-outcome`): `r4-*`.
// Release 5 (environments: reset, step, observations, `done`, environments on their own task queue; turn affinity with
// its fallback to the shared queue; patches `environments` and `turn-affinity`): `r5-*`.
// Release 6 (the episode built from parts; environment code bounded and typed, an unserved environment failing at
// once; patch `bounded-environments`): `r6-*`.
// Release 7 (one release marker per run instead of one per change, admission back-off and the stored outcome
// included; patch `release-7`): `r7-*`.
// Release 8 (agent programs as environments: `runAgentProgram`, each model call a Temporal Update `agentCall` and
// a turn; no patch, since only release-8 workers serve agent programs): `r8-*`, the agent cases `r8-agent-*`; an agent
// that is a workflow, run as the trajectory's child, came later in release 8 (before it landed): `r8-agent-workflow*`.
const cases: Record<string, Recording> = {
  'seed-default': plain({}),
  'early-stop-concat': plain({ earlyStop: true, layout: 'concat', discount: 0.9 }),
  'rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'grouped-admission': grouped({ turns: 2 }),
  'r2-seed-default': plain({ turns: 2 }),
  'r2-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r2-grouped-admission': grouped({ turns: 1 }),
  'r2-continued-while-queued': continuedWhileQueued,
  'r2-invalid-request': invalidRequest,
  'r3-seed-default': plain({ turns: 2 }),
  'r3-early-stop-concat': plain({ turns: 3, earlyStop: true, layout: 'concat', answerExtraction: 'math-verify' }),
  'r3-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r3-grouped-admission': grouped({ turns: 1 }),
  'r3-continued-while-queued': continuedWhileQueued,
  'r3-invalid-request': invalidRequest,
  'r3-code-task': codeTask,
  'r3-invalid-group-member': invalidGroupMember,
  'r4-seed-default': plain({ turns: 2 }),
  'r4-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r4-grouped-admission': grouped({ turns: 1 }),
  'r4-code-task': codeTask,
  'r4-cancelled-while-queued': cancelledWhileQueued,
  'r5-seed-default': plain({ turns: 3 }),
  'r5-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r5-grouped-admission': grouped({ turns: 2 }),
  'r5-code-task': codeTask,
  'r5-cancelled-while-queued': cancelledWhileQueued,
  'r5-invalid-request': invalidRequest,
  'r5-math-python-tool': inEnvironment('math-python-tool', { turns: 2 }),
  'r5-remote-environment': remoteEnvironment,
  'r5-affinity-off': plain({ turns: 2, turnAffinity: false }),
  'r5-affinity-fallback': affinityFallback,
  'r6-seed-default': plain({ turns: 3 }),
  'r6-early-stop-concat': plain({ turns: 3, earlyStop: true, layout: 'concat' }),
  'r6-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r6-grouped-admission': grouped({ turns: 2 }),
  'r6-code-task': codeTask,
  'r6-cancelled-while-queued': cancelledWhileQueued,
  'r6-invalid-request': invalidRequest,
  'r6-math-python-tool': inEnvironment('math-python-tool', { turns: 2 }),
  'r6-unknown-environment': inEnvironment('no-such-environment', { turns: 2 }),
  'r6-remote-environment': remoteEnvironment,
  'r6-affinity-off': plain({ turns: 2, turnAffinity: false }),
  'r6-affinity-fallback': affinityFallback,
  'r7-seed-default': plain({ turns: 3 }),
  'r7-early-stop-concat': plain({ turns: 3, earlyStop: true, layout: 'concat' }),
  'r7-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r7-grouped-admission': grouped({ turns: 2 }),
  'r7-continued-while-queued': continuedWhileQueued,
  'r7-code-task': codeTask,
  'r7-cancelled-while-queued': cancelledWhileQueued,
  'r7-invalid-request': invalidRequest,
  'r7-math-python-tool': inEnvironment('math-python-tool', { turns: 2 }),
  'r7-unknown-environment': inEnvironment('no-such-environment', { turns: 2 }),
  'r7-remote-environment': remoteEnvironment,
  'r7-affinity-off': plain({ turns: 2, turnAffinity: false }),
  'r7-affinity-fallback': affinityFallback,
  'r8-agent-program': agentEpisode('ts-calculator', 6),
  'r8-agent-fork': agentEpisode('py-forgetful', 6, { fork: true, minTurns: 2 }),
  'r8-agent-killed': agentKilled,
  'r8-agent-failed': agentFailed,
  'r8-agent-workflow': agentWorkflow('wf-calculator'),
  'r8-agent-workflow-failed': agentWorkflow('wf-fails'),
  'r8-seed-default': plain({ turns: 3 }),
  'r8-early-stop-concat': plain({ turns: 3, earlyStop: true, layout: 'concat' }),
  'r8-rejected-request': plain({ turns: 2, maxNewTokens: 500_000 }),
  'r8-grouped-admission': grouped({ turns: 2 }),
  'r8-continued-while-queued': continuedWhileQueued,
  'r8-code-task': codeTask,
  'r8-cancelled-while-queued': cancelledWhileQueued,
  'r8-invalid-request': invalidRequest,
  'r8-math-python-tool': inEnvironment('math-python-tool', { turns: 2 }),
  'r8-unknown-environment': inEnvironment('no-such-environment', { turns: 2 }),
  'r8-remote-environment': remoteEnvironment,
  'r8-affinity-off': plain({ turns: 2, turnAffinity: false }),
  'r8-affinity-fallback': affinityFallback,
};

const recorded = (name: string) => existsSync(path.join(out, `${name}.json`)) || existsSync(path.join(out, `${name}-first-run.json`));
const wanted = Object.keys(cases).filter((name) => process.argv.length <= 2 || process.argv.slice(2).includes(name));
for (const name of wanted.filter(recorded)) console.log(`${name}: already recorded, kept as it is`);
const pending = wanted.filter((name) => !recorded(name));
if (pending.length > 0) {
  const stack = await startSimulatedStack({ seed: 21 });
  const programs = pending.some((name) => name.includes('-agent-')) ? agentPrograms(await pythonPackageEnv(path.join(ROOT, '.ratchet'))) : [];
  let stopCpu = await stack.startWorkers({ gpu: false, agentPrograms: programs });
  let stopGpu = await stack.startWorkers({ cpu: false });
  const workers: RecordingWorkers = {
    restartGpu: async (backendUrl) => {
      await stopGpu();
      stopGpu = await stack.startWorkers({ cpu: false, ...(backendUrl ? { backend: createBackend('sglang', backendUrl) } : {}) });
    },
    stopCpu: () => stopCpu(),
    startCpu: async () => {
      stopCpu = await stack.startWorkers({ gpu: false, agentPrograms: programs });
    },
  };
  const stopController = await stack.startController();
  try {
    for (const name of pending) {
      for (const [file, { workflowId, runId }] of Object.entries(await cases[name]!(stack, name, workers))) {
        // The CLI writes the proto3 JSON that Worker.runReplayHistories reads.
        const args = [
          'workflow',
          'show',
          '--address',
          stack.temporalAddress,
          '--workflow-id',
          workflowId,
          ...(runId ? ['--run-id', runId] : []),
          '--output',
          'json',
        ];
        const { stdout } = await promisify(execFile)(localTemporalCliPath(path.resolve('.ratchet')), args, { maxBuffer: 64 << 20 });
        await writeFile(path.join(out, `${file}.json`), stdout, { flag: 'wx' });
        console.log(`recorded ${file}: ${stdout.length} bytes`);
      }
    }
  } finally {
    await stopController();
    await stopGpu();
    await stopCpu();
    await stack.stop();
  }
}
