import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequest, trajectoryId } from '../../src/client/submit.js';
import { loadDataset, type Problem } from '../../src/datasets/index.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { expectEnvironmentInvariants, storedSteps } from './environment-rows.js';
import { startTestStack, type TestStack } from './local-stack.js';

/** The trajectory workflow as release 4 shipped it, before environments (test/deploy/workflow-releases/README.md). */
const RELEASE_4 = path.resolve(import.meta.dirname, '../deploy/workflow-releases/r4-stored-outcome/workflows/index.js');

// Answers drawn from the context alone: two trajectories whose prompts and observations agree token for token
// generate the same tokens, whatever their ids.
let stack: TestStack;
let stopWorkers: () => Promise<void>;

beforeAll(async () => {
  stack = await startTestStack({ seed: 3, seedPerContext: true });
  stopWorkers = await stack.startWorkers();
}, 120_000);

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
});

function requests(run: string, problems: readonly Problem[], options: Partial<RolloutOptions>, environment?: string) {
  return problems.map((problem) =>
    trajectoryRequest(environment ? { ...problem, environment } : problem, { trajectoryId: trajectoryId(run, problem.qid, 0), options }),
  );
}

async function verdicts(id: string): Promise<string[]> {
  return (await storedSteps(stack.pool, id)).map((s) => s.verdict);
}

/** What a trainer reads of a row, and its verdicts: must not depend on whether the environment was named. */
async function trained(row: ExportedTrajectory) {
  const { packed_input_ids, packed_logprobs, prompt_mask, seq_no_eos_mask, seqlens, prompt_lens, rewards, raw_rewards, successes, end_reason } = row;
  return {
    packed_input_ids,
    packed_logprobs,
    prompt_mask,
    seq_no_eos_mask,
    seqlens,
    prompt_lens,
    rewards,
    raw_rewards,
    successes,
    end_reason,
    verdicts: await verdicts(row.trajectory_id),
  };
}

async function expectSameRows(plainRun: string, namedRun: string, count: number): Promise<void> {
  const plain = await stack.exported(`${plainRun}/`, { includeFailed: true });
  const named = await stack.exported(`${namedRun}/`, { includeFailed: true });
  expect(plain).toHaveLength(count);
  expect(named).toHaveLength(count);
  for (const row of plain) {
    const twin = named.find((other) => other.qid === row.qid)!;
    expect(await trained(twin)).toEqual(await trained(row));
  }
}

describe('environments on the real stack', () => {
  it(
    '`math` named explicitly stores exactly what a request without an environment stores, and what release 4 stored',
    { timeout: 240_000 },
    async () => {
      const problems = stack.problems.slice(0, 8);
      const options = { turns: 3 };
      // The same requests without an environment, on the release-4 workflow (the workers' activities are today's).
      await stopWorkers();
      const stopRelease4 = await stack.startWorkers({
        workflowBundle: await bundleWorkflowCode({ workflowsPath: RELEASE_4, logger: new DefaultLogger('WARN') }),
      });
      const released = await runRollouts(stack.client, requests('env-r4', problems, options));
      await stopRelease4();
      stopWorkers = await stack.startWorkers();
      expect(released.map((r) => r.status)).toEqual(Array(8).fill('completed'));

      const plain = await runRollouts(stack.client, requests('env-plain', problems, options));
      const named = await runRollouts(stack.client, requests('env-math', problems, options, 'math'));
      expect([...plain, ...named].map((r) => r.status)).toEqual(Array(16).fill('completed'));
      await expectSameRows('env-plain', 'env-math', 8);
      await expectSameRows('env-r4', 'env-math', 8);
      const rows = await stack.exported('env-math/');
      // Both verdicts occurred, so both feedback sentences were compared.
      expect(new Set(rows.flatMap((row) => row.successes)).size).toBe(2);
      const { rows: stored } = await stack.pool.query(
        "SELECT environment, count(*)::int AS n FROM trajectories WHERE trajectory_id LIKE 'env-math/%' GROUP BY 1",
      );
      expect(stored).toEqual([{ environment: 'math', n: 8 }]);
      // Release 4 knew no environments: its rows name none (so the workflow that ran them was release 4's).
      const { rows: r4 } = await stack.pool.query(
        "SELECT environment, count(*)::int AS n FROM trajectories WHERE trajectory_id LIKE 'env-r4/%' GROUP BY 1",
      );
      expect(r4).toEqual([{ environment: null, n: 8 }]);
    },
  );

  it('`math-python-tool` runs programs as tool turns and ends each episode at its final answer', { timeout: 180_000 }, async () => {
    const problems = stack.problems.filter((p) => p.source === 'math').slice(0, 10);
    const results = await runRollouts(stack.client, requests('env-tool', problems, { turns: 4 }, 'math-python-tool'));
    expect(results.map((r) => r.status)).toEqual(Array(10).fill('completed'));
    const rows = await stack.exported('env-tool/');
    expect(rows).toHaveLength(10);
    let toolTurns = 0;
    for (const row of rows) {
      const steps = await storedSteps(stack.pool, row.trajectory_id);
      expectEnvironmentInvariants(row, stack.tokenizer, steps);
      for (const [t, { verdict, step }] of steps.entries()) {
        const last = t === steps.length - 1;
        if (verdict === 'tool_call') {
          toolTurns += 1;
          expect(step!.observations).toHaveLength(1);
          expect(step!.observations[0]!.role).toBe('tool');
          // The simulated program prints the answer it would have stated.
          expect(step!.observations[0]!.content).not.toBe('');
          expect(step!.info.outcome).toBe('exited');
          expect([step!.reward, step!.done]).toEqual([0, false]);
        } else {
          expect(['correct', 'wrong']).toContain(verdict);
          expect(step!.done).toBe(true);
          expect(step!.reward).toBe(verdict === 'correct' ? 1 : -1);
          expect(last).toBe(true);
        }
      }
      expect(row.end_reason).toBe(steps.at(-1)!.step!.done ? 'done' : 'turns');
    }
    expect(toolTurns).toBeGreaterThan(0);
    expect(rows.filter((row) => row.end_reason === 'done').length).toBeGreaterThan(5);
  });

  it('`code` named explicitly stores exactly what a code task without an environment stores', { timeout: 180_000 }, async () => {
    const { problems } = await loadDataset('data/code-sample.jsonl', { limit: 4 });
    const options = { turns: 2 };
    const plain = await runRollouts(stack.client, requests('env-code-plain', problems, options));
    const named = await runRollouts(stack.client, requests('env-code', problems, options, 'code'));
    expect([...plain, ...named].map((r) => r.status)).toEqual(Array(8).fill('completed'));
    await expectSameRows('env-code-plain', 'env-code', 4);
  });
});
