import { readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProgram } from '../../src/agent/program-host.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { observationTokens } from '../../src/tokens/conversation-tokens.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { expectServedOnce } from './agent-rows.js';
import { expectEnvironmentInvariants, storedSteps } from './environment-rows.js';
import { startTestStack, type TestStack } from './local-stack.js';
import { until } from './until.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const UNSTEADY = path.join(import.meta.dirname, 'fixtures/agents/unsteady-agent.mjs');
const PID_FILE = path.join(os.tmpdir(), `ratchet-agent-pid-${process.pid}`);

let stack: TestStack;
let stopWorkers: () => Promise<void>;
let python: string;

/** The two examples, a failing program, one that returns garbage, and the Python example started through a PID file. */
function programs(): AgentProgram[] {
  const python3 = [python, path.join(ROOT, 'examples/agents/calculator_agent.py')];
  return [
    { name: 'ts-calculator', command: [process.execPath, path.join(ROOT, 'examples/agents/ts-agent.mjs')] },
    { name: 'py-calculator', command: python3 },
    { name: 'py-forgetful', command: python3, env: { CALCULATOR_AGENT_FORGET_REASONING: '1' } },
    // Writes its PID where the test finds it, then becomes the example: the test kills exactly this process.
    { name: 'py-killable', command: ['/bin/sh', '-c', `echo $$ > "${PID_FILE}" && exec "$0" "$@"`, ...python3] },
    { name: 'crashes', command: [process.execPath, '-e', 'console.error("boom: a typo in the agent"); process.exit(3)'] },
    { name: 'missing', command: ['/nonexistent/agent-binary'] },
    { name: 'fewer-calls', command: [process.execPath, UNSTEADY], env: { UNSTEADY: 'fewer' } },
    { name: 'other-call', command: [process.execPath, UNSTEADY], env: { UNSTEADY: 'other' } },
    { name: 'endless', command: [process.execPath, path.join(import.meta.dirname, 'fixtures/agents/endless-agent.mjs')] },
    { name: 'hangs', command: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] },
    { name: 'huge-result', command: [process.execPath, '-e', 'require("fs").writeFileSync(process.env.RATCHET_RESULT, "9".repeat(2e6))'] },
    { name: 'garbage', command: [process.execPath, '-e', 'require("fs").writeFileSync(process.env.RATCHET_RESULT, "{\\"score\\": 1}")'] },
  ];
}

beforeAll(async () => {
  python = await pythonPackageEnv(path.join(ROOT, '.ratchet'));
  stack = await startTestStack({ seed: 11, tokensPerSecond: 400 });
  stopWorkers = await stack.startWorkers({ agentPrograms: programs() });
}, 240_000);

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
  await rm(PID_FILE, { force: true });
});

const OPTIONS: Partial<RolloutOptions> = { turns: 6, maxNewTokens: 256 };

function requests(run: string, environment: string, count: number, options = OPTIONS) {
  return stack.problems
    .slice(0, count)
    .map((problem) => trajectoryRequest({ ...problem, environment }, { trajectoryId: trajectoryId(run, problem.qid, 0), options }));
}

async function programAttempts(id: string): Promise<number> {
  const history = await stack.client.workflow.getHandle(id).fetchHistory();
  const scheduled = history.events!.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'runAgentProgram');
  const started = history.events!.filter(
    (e) =>
      e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.scheduledEventId?.toString() === scheduled?.eventId?.toString(),
  );
  return started.map((e) => e.activityTaskStartedEventAttributes!.attempt ?? 1).at(-1) ?? 0;
}

describe('agent programs as environments', () => {
  it(
    'runs the AI SDK agent: every call a turn, the rows token-exact with what the policy served, the answer judged',
    { timeout: 240_000 },
    async () => {
      const results = await runRollouts(stack.client, requests('agent-ts', 'ts-calculator', 4));
      expect(results.map((r) => r.status)).toEqual(Array(4).fill('completed'));
      const rows = await stack.exported('agent-ts/');
      expect(rows).toHaveLength(4);
      for (const row of rows) {
        const steps = await storedSteps(stack.pool, row.trajectory_id);
        expectEnvironmentInvariants(row, stack.tokenizer, steps);
        expectServedOnce(stack, row);
        expect(row.environment).toBe('ts-calculator');
        // Every call but the last answered with tool calls (or a malformed one); the last is judged by the verifier.
        const last = steps.at(-1)!;
        expect(['correct', 'wrong', 'no_answer']).toContain(last.verdict);
        expect(last.step!.done).toBe(true);
        for (const step of steps.slice(0, -1)) {
          expect(['tool_calls', 'malformed_tool_call']).toContain(step.verdict);
          expect(step.step!.observations.length).toBeGreaterThan(0);
        }
        expect(row.raw_rewards.slice(0, -1).every((r) => r === 0)).toBe(true);
      }
      // At least one trajectory used a tool, so a tool result was tokenized into a context.
      expect(rows.some((row) => row.seqlens.length > 1)).toBe(true);
    },
  );

  it(
    'a Python agent SIGKILLed mid-episode: run again, its calls answered from the store, nothing generated twice',
    { timeout: 240_000 },
    async () => {
      await rm(PID_FILE, { force: true });
      const [request] = requests('agent-kill', 'py-killable', 1);
      const id = request!.trajectoryId;
      const running = runRollouts(stack.client, [request!]);
      // Killed while its second call's turn is generating (after its first was answered): the worst moment.
      await until(async () => {
        const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM turn_outputs WHERE trajectory_id = $1', [id]);
        return rows[0].n >= 2;
      }, 60_000);
      const pid = Number((await readFile(PID_FILE, 'utf8')).trim());
      process.kill(pid, 'SIGKILL');
      const [result] = await running;
      expect(result!.status).toBe('completed');
      expect(await programAttempts(id)).toBe(2);
      const [row] = await stack.exported('agent-kill/');
      expectEnvironmentInvariants(row!, stack.tokenizer, await storedSteps(stack.pool, id));
      expectServedOnce(stack, row!);
      const { rows } = await stack.pool.query('SELECT count(*)::int AS n FROM trajectories WHERE trajectory_id = $1', [id]);
      expect(rows[0].n).toBe(1);
    },
  );

  it(
    'a program that drops reasoning from its history forks: the fork is recorded and each turn trains on its own context',
    { timeout: 240_000 },
    async () => {
      const results = await runRollouts(stack.client, requests('agent-fork', 'py-forgetful', 3));
      expect(results.map((r) => r.status)).toEqual(Array(3).fill('completed'));
      const rows = await stack.exported('agent-fork/');
      const forked = rows.filter((row) => row.seqlens.length > 1);
      expect(forked.length).toBeGreaterThan(0);
      for (const row of forked) {
        const steps = await storedSteps(stack.pool, row.trajectory_id);
        expectServedOnce(stack, row);
        for (const step of steps.slice(0, -1)) expect(step.step!.info['fork']).toMatchObject({ kind: 'dropped-reasoning' });
        // The second context is not the first turn's sequence plus the tool result: it was rendered anew, and only its
        // own output is trained on (prompt mask 0 exactly on the output).
        const first = row.packed_input_ids.slice(0, row.seqlens[0]);
        const second = row.packed_input_ids.slice(row.seqlens[0], row.seqlens[0]! + row.seqlens[1]!);
        const extended = [...first, ...observationTokens(stack.tokenizer, steps[0]!.step!.observations, true).ids];
        expect(second.slice(0, row.prompt_lens[1])).not.toEqual(extended);
        const mask = row.prompt_mask.slice(row.seqlens[0], row.seqlens[0]! + row.seqlens[1]!);
        expect(mask.filter((m) => !m)).toHaveLength(row.seqlens[1]! - row.prompt_lens[1]!);
      }
    },
  );

  it(
    'a program that keeps failing, or cannot start, ends typed with its output, after its runs; a result that is not one is refused',
    { timeout: 120_000 },
    async () => {
      const results = await runRollouts(stack.client, [
        ...requests('agent-crash', 'crashes', 1),
        ...requests('agent-garbage', 'garbage', 1),
        ...requests('agent-missing', 'missing', 1),
      ]);
      expect(results.map((r) => r.status)).toEqual(['failed', 'failed', 'failed']);
      const { rows } = await stack.pool.query(
        "SELECT trajectory_id, failure_type, error FROM trajectories WHERE trajectory_id LIKE ANY (ARRAY['agent-crash/%', 'agent-garbage/%', 'agent-missing/%']) ORDER BY 1",
      );
      expect(rows[0]).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(rows[0].error).toContain('boom: a typo in the agent');
      expect(rows[0].error).toContain('exited with code 3');
      expect(rows[1]).toMatchObject({ failure_type: 'AgentResultInvalid' });
      expect(rows[1].error).toContain('score');
      // A typo in the registered command: each run fails at once, and the trajectory ends typed, naming the cause.
      expect(rows[2]).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(rows[2].error).toMatch(/could not be started.*ENOENT/);
    },
  );

  it('a program run again that makes other calls, or fewer, fails the trajectory CallDiverged: no silent drift', { timeout: 120_000 }, async () => {
    const results = await runRollouts(stack.client, [...requests('agent-fewer', 'fewer-calls', 1), ...requests('agent-other', 'other-call', 1)]);
    expect(results.map((r) => r.status)).toEqual(['failed', 'failed']);
    const { rows } = await stack.pool.query(
      "SELECT trajectory_id, failure_type, error FROM trajectories WHERE trajectory_id LIKE 'agent-fewer/%' OR trajectory_id LIKE 'agent-other/%' ORDER BY 1",
    );
    expect(rows.map((row) => row.failure_type)).toEqual(['CallDiverged', 'CallDiverged']);
    expect(rows[0].error).toContain('returned after 1 calls, but 2 are recorded');
    expect(rows[1].error).toContain('differs from the call recorded at that index');
  });

  it(
    'a program that hangs is killed at agentProgramSeconds on each run, then fails typed; a huge result is not read',
    { timeout: 120_000 },
    async () => {
      const hanging = requests('agent-hang', 'hangs', 1).map((request) => ({ ...request, timeouts: { agentProgramSeconds: 1 } }));
      const results = await runRollouts(stack.client, [...hanging, ...requests('agent-huge', 'huge-result', 1)]);
      expect(results.map((r) => r.status)).toEqual(['failed', 'failed']);
      const { rows } = await stack.pool.query(
        "SELECT trajectory_id, failure_type, error FROM trajectories WHERE trajectory_id LIKE 'agent-hang/%' OR trajectory_id LIKE 'agent-huge/%' ORDER BY 1",
      );
      expect(rows[0]).toMatchObject({ failure_type: 'AgentProgramFailed' });
      expect(rows[0].error).toContain('ran past its 1 s (agentProgramSeconds)');
      expect(await programAttempts(rows[0].trajectory_id)).toBe(3);
      expect(rows[1]).toMatchObject({ failure_type: 'AgentResultInvalid' });
      expect(rows[1].error).toContain('over the 1048576 a result may hold');
    },
  );

  it('a program that calls past the turn limit is refused there: the episode ends as one that ran out of turns', { timeout: 120_000 }, async () => {
    const [result] = await runRollouts(stack.client, requests('agent-limit', 'endless', 1, { turns: 3, maxNewTokens: 64 }));
    expect(result).toMatchObject({ status: 'completed', endReason: 'turns' });
    const [row] = await stack.exported('agent-limit/');
    const steps = await storedSteps(stack.pool, row!.trajectory_id);
    expectEnvironmentInvariants(row!, stack.tokenizer, steps);
    expectServedOnce(stack, row!);
    expect(steps.map((s) => s.verdict).at(-1)).toBe('turn_limit');
    expect(steps.at(-1)!.step).toMatchObject({ reward: 0, success: false, done: false, info: { end: { kind: 'turn-limit', turns: 3 } } });
    expect(row!.end_reason).toBe('turns');
  });
});
