import { describe, expect, it } from 'vitest';
import { parseDatasetText } from '../../src/datasets/index.js';

const jsonl = (...rows: unknown[]): string => rows.map((row) => JSON.stringify(row)).join('\n');
const io = (value: unknown): string => JSON.stringify(value);

describe('code rows', () => {
  it('loads an AReaL code row with its tests, limits and reference solutions', () => {
    const row = {
      task: 'code',
      query_id: 'c-1',
      prompt: 'Print the sum of two integers.',
      solutions: ['print(sum(map(int, input().split())))'],
      input_output: io({ inputs: ['1 2\n'], outputs: ['3\n'], fn_name: '' }),
      timeout: 3,
      memory: 256,
    };
    const { problems, errors } = parseDatasetText(jsonl(row), 'code.jsonl');
    expect(errors).toEqual([]);
    expect(problems).toEqual([
      {
        qid: 'c-1',
        problem: row.prompt,
        gold: row.solutions,
        source: 'areal',
        code: { tests: { inputs: ['1 2\n'], outputs: ['3\n'], fnName: '' }, timeoutS: 3, memoryMb: 256 },
      },
    ]);
  });

  it('maps an APPS/TACO call-based row onto JSON-line arguments and return values', () => {
    const row = {
      problem_id: 12,
      question: 'Add two numbers.',
      starter_code: 'def add(a, b):',
      solutions: io(['def add(a, b):\n    return a + b']),
      input_output: io({
        fn_name: 'add',
        inputs: [
          [1, 2],
          [[1], [2]],
        ],
        outputs: [[3], [[1, 2]]],
      }),
    };
    const [problem] = parseDatasetText(jsonl(row), 'apps.jsonl').problems;
    expect(problem).toMatchObject({ qid: 'apps-12', source: 'apps', gold: ['def add(a, b):\n    return a + b'] });
    expect(problem?.code?.tests).toEqual({ fnName: 'add', inputs: ['1\n2', '[1]\n[2]'], outputs: ['3', '[1,2]'] });
    expect(problem?.problem).toContain('Starter code:\n```python\ndef add(a, b):\n```');
  });

  it('maps an APPS stdin row whose outputs are lists of lines', () => {
    const row = { question: 'Echo.', input_output: io({ inputs: ['a\n'], outputs: [['a', '']] }) };
    expect(parseDatasetText(jsonl(row), 'apps.jsonl').problems[0]?.code?.tests).toEqual({ inputs: ['a\n'], outputs: ['a\n'], fnName: '' });
  });

  it('maps a LiveCodeBench row: functional tests call metadata.func_name', () => {
    const row = {
      question_id: 'abc',
      question_content: 'Two sum.',
      starter_code: 'class Solution:\n    def twoSum(self, nums, target):',
      public_test_cases: io([{ input: '[2,7]\n9', output: '[0, 1]', testtype: 'functional' }]),
      private_test_cases: 'eJzLSM3JyQcABiwCFQ==',
      metadata: io({ func_name: 'twoSum' }),
    };
    const { problems, errors } = parseDatasetText(jsonl(row), 'lcb.jsonl');
    expect(errors).toEqual([]);
    expect(problems[0]).toMatchObject({
      qid: 'lcb-abc',
      source: 'livecodebench',
      gold: [],
      code: { tests: { inputs: ['[2,7]\n9'], outputs: ['[0, 1]'], fnName: 'twoSum' } },
    });
  });
});

describe('a malformed code row is reported with file:line', () => {
  const rejection = (row: unknown): string => {
    const { problems, errors } = parseDatasetText(jsonl({ problem: 'p', answer: '1' }, row), 'data/code.jsonl');
    expect(problems).toHaveLength(1);
    return String(errors[0]);
  };
  const base = { task: 'code', query_id: 'q', prompt: 'p' };

  it('tests lists of different lengths', () => {
    expect(rejection({ ...base, input_output: io({ inputs: ['1', '2'], outputs: ['1'] }) })).toBe(
      'data/code.jsonl:2: AReaL code row: "input_output" has 2 inputs but 1 outputs',
    );
  });

  it('a test that is not a string', () => {
    expect(rejection({ ...base, input_output: io({ inputs: ['1'], outputs: [1] }) })).toBe(
      'data/code.jsonl:2: AReaL code row: "input_output.outputs[0]" must be a string, got number',
    );
  });

  it('input_output that is not JSON', () => {
    expect(rejection({ ...base, input_output: '{"inputs": [' })).toMatch(/^data\/code\.jsonl:2: AReaL code row: "input_output" is not valid JSON: /);
  });

  it('no input_output at all', () => {
    expect(rejection(base)).toBe('data/code.jsonl:2: AReaL code row: "input_output" is missing');
  });

  it('a timeout that is not positive', () => {
    expect(rejection({ ...base, timeout: 0, input_output: io({ inputs: ['1'], outputs: ['1'] }) })).toBe(
      'data/code.jsonl:2: AReaL code row: "timeout" must be positive',
    );
  });

  it('a test case with NUL, which Postgres cannot store', () => {
    expect(rejection({ ...base, input_output: io({ inputs: ['a\u0000b'], outputs: ['1'] }) })).toMatch(
      /^data\/code\.jsonl:2: not a valid trajectory request: .*NUL/,
    );
  });

  it('tests too large for a trajectory request', () => {
    const big = 'x'.repeat(900_000);
    expect(rejection({ ...base, input_output: io({ inputs: [big, big, big], outputs: ['1', '2', '3'] }) })).toMatch(
      /^data\/code\.jsonl:2: too large: its trajectory request would be about \d+ bytes as JSON/,
    );
  });

  it('APPS solutions that are not a JSON list', () => {
    expect(rejection({ question: 'q', solutions: 'print(1)', input_output: io({ inputs: ['1'], outputs: ['1'] }) })).toBe(
      'data/code.jsonl:2: APPS/TACO row: "solutions" must be a JSON list (as a string)',
    );
  });
});
