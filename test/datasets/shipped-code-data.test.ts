import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { loadDataset } from '../../src/datasets/index.js';

const at = (relative: string): string => fileURLToPath(new URL(relative, import.meta.url));

describe('the shipped code samples', () => {
  it('load 40 code problems, both modes, each passing its own tests with its reference solution', async () => {
    const { problems, errors } = await loadDataset(at('../../data/code-sample.jsonl'));
    expect(errors.map(String)).toEqual([]);
    expect(problems).toHaveLength(40);
    expect(problems.filter((problem) => problem.code?.tests.fnName === '')).toHaveLength(25);
    expect(problems.filter((problem) => problem.code?.tests.fnName)).toHaveLength(15);
    const sandbox = new CodeSandboxPool({ concurrency: 2 });
    const verdicts = await Promise.all(
      problems.map((problem) => verifyCodeAnswer(problem.code!, `\`\`\`python\n${problem.gold[0]}\n\`\`\``, { sandbox })),
    );
    expect(verdicts.filter((verdict) => verdict.status !== 'correct').map((verdict) => verdict.detail)).toEqual([]);
  });

  it('mix 10 math and 10 code rows in one file', async () => {
    const { problems, errors } = await loadDataset(at('../../data/mixed-sample.jsonl'));
    expect(errors.map(String)).toEqual([]);
    expect(problems.map((problem) => (problem.code ? 'code' : 'math'))).toEqual(
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 'math' : 'code')),
    );
  });
});
