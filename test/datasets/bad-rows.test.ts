import { describe, expect, it } from 'vitest';
import { parseDatasetText } from '../../src/datasets/index.js';

const good = JSON.stringify({ question: 'How many?', answer: 'Two.\n#### 2' });

/** Parses `bad` on line 2 of a file between two good rows, and returns its one error as a string. */
function rejection(bad: string): string {
  const { problems, errors } = parseDatasetText([good, bad, good.replace('How', 'Why')].join('\n'), 'data/set.jsonl');
  expect(problems.map((problem) => problem.qid)).toEqual(['set-1', 'set-3']);
  expect(errors).toHaveLength(1);
  expect(errors[0]).toMatchObject({ file: 'data/set.jsonl', line: 2 });
  return String(errors[0]);
}

describe('a malformed row is reported with file:line and skipped while the rest load', () => {
  it('invalid JSON', () => {
    expect(rejection('{"question": "q", ')).toMatch(/^data\/set\.jsonl:2: invalid JSON: /);
  });

  it('JSON that is not an object', () => {
    expect(rejection('["question", "answer"]')).toBe('data/set.jsonl:2: row must be a JSON object, got array');
  });

  it('an unknown shape', () => {
    expect(rejection('{"text": "q", "label": "1"}')).toBe(
      'data/set.jsonl:2: unknown row shape (keys: text, label); expected GSM8K question/answer, MATH problem/answer, AReaL query_id/prompt/solutions (or task "code" with input_output), APPS/TACO question/input_output or LiveCodeBench question_content/public_test_cases',
    );
  });

  it('a missing field', () => {
    expect(rejection('{"problem": "p"}')).toBe('data/set.jsonl:2: MATH row: "answer" is missing');
  });

  it('an empty field', () => {
    expect(rejection('{"question": "  ", "answer": "#### 2"}')).toBe('data/set.jsonl:2: GSM8K row: "question" is empty');
  });

  it('a field of the wrong type', () => {
    expect(rejection('{"problem": "p", "answer": 42}')).toBe('data/set.jsonl:2: MATH row: "answer" must be a string, got number');
  });

  it('a task_id that is not an integer', () => {
    expect(rejection('{"problem": "p", "answer": "1", "task_id": 1.5}')).toBe('data/set.jsonl:2: MATH row: "task_id" must be an integer, got 1.5');
  });

  it('every bad field of a row at once', () => {
    expect(rejection('{"query_id": "", "prompt": 3, "solutions": []}')).toBe(
      'data/set.jsonl:2: AReaL row: "query_id" is empty; "prompt" must be a string, got number; "solutions" is empty',
    );
  });

  it('an AReaL solution that is not a string', () => {
    expect(rejection('{"query_id": "q", "prompt": "p", "solutions": ["1", null]}')).toBe(
      'data/set.jsonl:2: AReaL row: "solutions[1]" must be a string, got null',
    );
  });

  it('an AReaL task other than math or code', () => {
    expect(rejection('{"query_id": "q", "prompt": "p", "solutions": ["1"], "task": "proof"}')).toBe(
      'data/set.jsonl:2: AReaL row: unsupported task "proof" (only "math" and "code" load)',
    );
  });

  it('a GSM8K answer without "####"', () => {
    expect(rejection('{"question": "q", "answer": "The answer is 2."}')).toBe(
      'data/set.jsonl:2: GSM8K row: "answer" has no "#### <final answer>" line',
    );
  });

  it('a field longer than 1 MB', () => {
    const huge = JSON.stringify({ problem: 'x'.repeat(1_000_001), answer: '1' });
    expect(rejection(huge)).toBe('data/set.jsonl:2: MATH row: "problem" is over the 1 MB field limit (1000001 characters)');
  });

  it('a qid already used earlier in the file', () => {
    const row = JSON.stringify({ problem: 'p', answer: '1', unique_id: 'u/1' });
    const { problems, errors } = parseDatasetText([row, good, row].join('\n'), 'data/set.jsonl');
    expect(problems.map((problem) => problem.qid)).toEqual(['u/1', 'set-2']);
    expect(errors.map(String)).toEqual(['data/set.jsonl:3: duplicate qid "u/1" (first on line 1)']);
  });
});

describe('a file of only malformed rows', () => {
  it('returns zero problems and every error, for the caller to judge', () => {
    const { problems, errors } = parseDatasetText('{\n\n[]\n{"problem": "p"}\n', 'bad.jsonl');
    expect(problems).toEqual([]);
    expect(errors.map((error) => error.line)).toEqual([1, 3, 4]);
  });
});

describe('a row whose trajectory request would be rejected is reported with file:line and skipped', () => {
  it('a NUL character in the problem, which Postgres text cannot store', () => {
    expect(rejection(JSON.stringify({ problem: 'p\u0000q', answer: '1' }))).toBe(
      'data/set.jsonl:2: not a valid trajectory request: problem: must not contain NUL (U+0000), which Postgres text cannot store',
    );
  });

  it('a NUL character in a gold answer', () => {
    expect(rejection(JSON.stringify({ query_id: 'q', prompt: 'p', solutions: ['1', '\u00002'] }))).toBe(
      'data/set.jsonl:2: not a valid trajectory request: gold[1]: must not contain NUL (U+0000), which Postgres text cannot store',
    );
  });

  it('a qid that would make trajectory ids over the workflow id limit', () => {
    expect(rejection(JSON.stringify({ problem: 'p', answer: '1', unique_id: 'ü'.repeat(450) }))).toBe(
      'data/set.jsonl:2: not a valid trajectory request: qid: must be at most 400 UTF-8 bytes (so that `<run>/<qid>/<sample>` fits a workflow id), got 900',
    );
  });

  it('a qid with a control character', () => {
    expect(rejection(JSON.stringify({ query_id: 'a\tb', prompt: 'p', solutions: ['1'] }))).toBe(
      'data/set.jsonl:2: not a valid trajectory request: qid: must not contain control characters (U+0000–U+001F, U+007F–U+009F)',
    );
  });

  it("a row whose request would pass Temporal's 2 MB payload limit, though each field is under 1 MB", () => {
    // 700,000 three-byte characters: 0.7 M characters, 2.1 MB of UTF-8.
    expect(rejection(JSON.stringify({ problem: '€'.repeat(700_000), answer: '1' }))).toMatch(
      /^data\/set\.jsonl:2: too large: its trajectory request would be about 21\d{5} bytes as JSON, over the 2096128-byte limit \(Temporal rejects payloads over 2 MiB\)$/,
    );
  });

  it('a row just under the limit but without room for a group and options', () => {
    // Two fields of 1 M characters, ~2,094,000 bytes of JSON: under the limit alone, over it with a group and options.
    const answer = `${'y'.repeat(953_150)}${'€'.repeat(46_850)}`;
    expect(rejection(JSON.stringify({ problem: 'x'.repeat(1_000_000), answer }))).toMatch(/^data\/set\.jsonl:2: too large: .* about 2098\d{3} bytes/);
  });

  it('keeps a row with a long problem that fits', () => {
    const { problems, errors } = parseDatasetText(JSON.stringify({ problem: 'x'.repeat(1_000_000), answer: 'y'.repeat(1_000_000) }), 'big.jsonl');
    expect(errors).toEqual([]);
    expect(problems).toHaveLength(1);
  });
});
