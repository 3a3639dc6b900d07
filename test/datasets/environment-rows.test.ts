import { describe, expect, it } from 'vitest';
import { trajectoryRequest } from '../../src/client/submit.js';
import { jsonObject, withEnvironment } from '../../src/cli/shared-options.js';
import { loadDataset, parseDatasetText } from '../../src/datasets/index.js';

const parse = (...rows: object[]) => parseDatasetText(rows.map((row) => JSON.stringify(row)).join('\n'), 'data/env.jsonl');

describe('a row names its environment', () => {
  it('in any shape, with its arguments; a game of its own needs no answer', () => {
    const { problems, errors } = parse(
      { question: 'What is 3 + 3?', answer: '#### 6', environment: 'math-python-tool' },
      { problem: 'Guess.', environment: 'guess-number', environment_args: { low: 1, high: 20 } },
      { query_id: 'q', prompt: 'What is 2 + 2?', solutions: ['4'], environment: 'math-python-tool', environment_args: { timeout: 5 } },
      { problem: 'Plain.', answer: '1' },
    );
    expect(errors).toEqual([]);
    expect(problems.map(({ qid, gold, environment, environmentArgs }) => ({ qid, gold, environment, environmentArgs }))).toEqual([
      { qid: 'env-1', gold: ['#### 6'], environment: 'math-python-tool', environmentArgs: undefined },
      { qid: 'env-2', gold: [], environment: 'guess-number', environmentArgs: { low: 1, high: 20 } },
      { qid: 'q', gold: ['4'], environment: 'math-python-tool', environmentArgs: { timeout: 5 } },
      { qid: 'env-4', gold: ['1'], environment: undefined, environmentArgs: undefined },
    ]);
    expect(trajectoryRequest(problems[1]!, { trajectoryId: 'r/env-2/0' })).toMatchObject({
      environment: 'guess-number',
      environmentArgs: { low: 1, high: 20 },
      gold: [],
    });
    expect(trajectoryRequest(problems[3]!, { trajectoryId: 'r/env-4/0' })).not.toHaveProperty('environment');
  });

  it('and a bad name, bad arguments or a missing answer for a judged environment are reported by line', () => {
    const { problems, errors } = parse(
      { problem: 'p', answer: '1', environment: 'guess number' },
      { problem: 'p', answer: '1', environment: 5 },
      { question: 'q', answer: '#### 1', environment_args: [1] },
      { problem: 'p', environment: 'math' },
      { problem: 'p', answer: '1', environment: 'code' },
    );
    expect(problems).toEqual([]);
    expect(errors.map(String)).toEqual([
      'data/env.jsonl:1: MATH row: "environment" must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit',
      'data/env.jsonl:2: MATH row: "environment" must be a string, got number',
      'data/env.jsonl:3: GSM8K row: "environment_args" must be an object, got array',
      'data/env.jsonl:4: MATH row: "answer" is missing',
      'data/env.jsonl:5: not a valid trajectory request: code: is required by the `code` environment (the tests its answers run against)',
    ]);
  });

  it('the shipped environment samples load', async () => {
    const guess = await loadDataset('data/guess-number-sample.jsonl');
    expect(guess.errors).toEqual([]);
    expect(guess.problems.map((p) => [p.environment, p.environmentArgs])).toEqual(Array(4).fill(['guess-number', { low: 1, high: 20 }]));
    const tool = await loadDataset('data/tool-sample.jsonl');
    expect(tool.errors).toEqual([]);
    expect(tool.problems.map((p) => p.environment)).toEqual(Array(4).fill('math-python-tool'));
  });
});

describe('--environment and --environment-args', () => {
  it("replace every row's own", async () => {
    const { problems } = await loadDataset('data/guess-number-sample.jsonl');
    expect(withEnvironment(problems, {})).toBe(problems);
    const changed = withEnvironment(problems, { environment: 'slow-guess', environmentArgs: jsonObject('{"low": 5}') });
    expect(changed.map((p) => [p.environment, p.environmentArgs])).toEqual(Array(4).fill(['slow-guess', { low: 5 }]));
    expect(withEnvironment(problems, { environment: 'other' })[0]!.environmentArgs).toEqual({ low: 1, high: 20 });
  });

  it('take a JSON object only', () => {
    expect(() => jsonObject('[1]')).toThrow('expected a JSON object');
    expect(() => jsonObject('{')).toThrow('expected a JSON object');
    expect(() => jsonObject('null')).toThrow('expected a JSON object');
  });
});
