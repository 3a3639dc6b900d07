import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { loadDataset, type Problem } from '../../src/datasets/index.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy, type RunningSimulatedPolicy } from '../../src/policy/simulated/server.js';
import { codePromptIds } from '../../src/tokens/code-prompt.js';
import { promptIds } from '../../src/tokens/conversation-tokens.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { SglangClient } from './non-streaming-client.js';

let tokenizer: ModelTokenizer;
let problems: Problem[];
const policies: RunningSimulatedPolicy[] = [];
const sandbox = new CodeSandboxPool({ concurrency: 2 });

beforeAll(async () => {
  tokenizer = await loadModelTokenizer();
  problems = (await loadDataset(fileURLToPath(new URL('../../data/mixed-sample.jsonl', import.meta.url)))).problems;
});

afterAll(async () => {
  await Promise.all(policies.map((policy) => policy.close()));
});

async function answers(correctProbability: number): Promise<Array<{ problem: Problem; text: string }>> {
  const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(problems), {
    ...DEFAULT_SIMULATED_POLICY,
    faults: NO_FAULTS,
    tokensPerSecond: 1e6,
    seed: 5,
    correctProbability,
  });
  policies.push(policy);
  const client = new SglangClient(policy.url);
  return Promise.all(
    problems.map(async (problem) => {
      const inputIds = problem.code ? codePromptIds(tokenizer, problem.problem) : promptIds(tokenizer, problem.problem);
      const generation = await client.generate({ inputIds, maxNewTokens: 4096, temperature: 1 });
      return { problem, text: tokenizer.decodeText(generation.outputIds) };
    }),
  );
}

describe('the simulated policy on code problems', () => {
  it('answers with the reference solution when it should be right, which the sandbox scores correct', async () => {
    const code = (await answers(1)).filter(({ problem }) => problem.code);
    expect(code).toHaveLength(10);
    const verdicts = await Promise.all(code.map(({ problem, text }) => verifyCodeAnswer(problem.code!, text, { sandbox })));
    expect(verdicts.map((verdict) => verdict.status)).toEqual(code.map(() => 'correct'));
  });

  it('answers wrong or broken code when it should be wrong, and still boxed answers for math', async () => {
    const all = await answers(0);
    const code = all.filter(({ problem }) => problem.code);
    const verdicts = await Promise.all(code.map(({ problem, text }) => verifyCodeAnswer(problem.code!, text, { sandbox })));
    expect(verdicts.every((verdict) => verdict.status === 'wrong' || verdict.status === 'runtime_error')).toBe(true);
    expect(new Set(verdicts.map((verdict) => verdict.status))).toEqual(new Set(['wrong', 'runtime_error']));
    for (const { problem, text } of all) expect(text.includes('\\boxed{')).toBe(!problem.code);
  });
});
