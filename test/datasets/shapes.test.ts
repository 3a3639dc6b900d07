import { describe, expect, it } from 'vitest';
import { parseDatasetText } from '../../src/datasets/index.js';

const jsonl = (...rows: unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n');

describe('parseDatasetText', () => {
  it('parses a GSM8K row, keeping the worked answer as gold', () => {
    const answer = 'She has 3 + 4 = <<3+4=7>>7 apples.\n#### 7';
    const { problems, errors } = parseDatasetText(jsonl({ question: 'How many apples?', answer }), 'data/gsm.jsonl');
    expect(errors).toEqual([]);
    expect(problems).toEqual([{ qid: 'gsm-1', problem: 'How many apples?', gold: [answer], source: 'gsm8k' }]);
  });

  it('parses a MATH row, ignoring its solution, subject and level', () => {
    const row = {
      problem: 'Simplify $\\sqrt{20}$.',
      solution: '$\\boxed{2\\sqrt{5}}$',
      answer: '2\\sqrt{5}',
      unique_id: 'test/algebra/7.json',
      subject: 'Algebra',
      level: 2,
    };
    const { problems, errors } = parseDatasetText(jsonl(row), 'math.jsonl');
    expect(errors).toEqual([]);
    expect(problems).toEqual([{ qid: 'test/algebra/7.json', problem: row.problem, gold: ['2\\sqrt{5}'], source: 'math' }]);
  });

  it('parses an AReaL row with every solution as gold', () => {
    const row = { query_id: 'q-17', prompt: 'What is $1+1$?', solutions: ['\\boxed{2}', 'so \\boxed{2}'], task: 'math' };
    const { problems, errors } = parseDatasetText(jsonl(row), 'areal.jsonl');
    expect(errors).toEqual([]);
    expect(problems).toEqual([{ qid: 'q-17', problem: row.prompt, gold: row.solutions, source: 'areal' }]);
  });

  it('treats an AReaL row without a task as math', () => {
    const { problems } = parseDatasetText(jsonl({ query_id: 'q', prompt: 'p', solutions: ['\\boxed{1}'] }), 'a.jsonl');
    expect(problems.map((problem) => problem.source)).toEqual(['areal']);
  });

  it('reads an integer task_id in every shape', () => {
    const text = jsonl(
      { question: 'q', answer: '#### 1', task_id: 0 },
      { problem: 'p', answer: '1', task_id: 3 },
      { query_id: 'a', prompt: 'p', solutions: ['1'], task: 'math', task_id: 7 },
    );
    expect(parseDatasetText(text, 'mixed.jsonl').problems.map((problem) => problem.taskId)).toEqual([0, 3, 7]);
  });

  it('leaves taskId out when the row has none', () => {
    const [problem] = parseDatasetText(jsonl({ question: 'q', answer: '#### 1' }), 'x.jsonl').problems;
    expect(problem).not.toHaveProperty('taskId');
  });

  it('detects the shape per row, so one file may mix shapes', () => {
    const text = jsonl({ question: 'q', answer: '#### 1' }, { problem: 'p', answer: '2' }, { query_id: 'a', prompt: 'p', solutions: ['3'] });
    expect(parseDatasetText(text, 'mixed.jsonl').problems.map((problem) => problem.source)).toEqual(['gsm8k', 'math', 'areal']);
  });
});

describe('qids', () => {
  it('fall back to the file stem and the 1-based line, counting blank lines', () => {
    const text = `${jsonl({ question: 'a', answer: '#### 1' })}\n\n${jsonl({ problem: 'b', answer: '2' })}\n`;
    const { problems } = parseDatasetText(text, '/data/sets/gsm8k_test.jsonl');
    expect(problems.map((problem) => problem.qid)).toEqual(['gsm8k_test-1', 'gsm8k_test-3']);
  });

  it('are the same on every load of the same text', () => {
    const text = jsonl({ question: 'a', answer: '#### 1' }, { problem: 'b', answer: '2', unique_id: 'u/1' });
    const qids = (): string[] => parseDatasetText(text, 'set.jsonl').problems.map((problem) => problem.qid);
    expect(qids()).toEqual(['set-1', 'u/1']);
    expect(qids()).toEqual(qids());
  });

  it('do not shift when an earlier row is malformed', () => {
    const text = ['{oops', jsonl({ question: 'a', answer: '#### 1' })].join('\n');
    expect(parseDatasetText(text, 'set.jsonl').problems.map((problem) => problem.qid)).toEqual(['set-2']);
  });
});
