import { describe, expect, it } from 'vitest';
import { checkProgramResult, RESULT_ANSWER_LIMIT } from '../../src/agent/program-result.js';

describe("an agent program's result", () => {
  it('is an answer (judged by the verifier) or a reward, with success only beside a reward', () => {
    expect(checkProgramResult('{"answer": "\\\\boxed{4}"}')).toEqual({ result: { answer: '\\boxed{4}' } });
    expect(checkProgramResult('{"reward": 0.5}')).toEqual({ result: { reward: 0.5 } });
    expect(checkProgramResult('{"reward": -1, "success": false}')).toEqual({ result: { reward: -1, success: false } });
  });

  it.each([
    ['not JSON', '{"answer": ', 'not JSON'],
    ['neither', '{}', 'exactly one of'],
    ['both', '{"answer": "4", "reward": 1}', 'exactly one of'],
    ['success with an answer', '{"answer": "4", "success": true}', '"success" goes with "reward"'],
    ['an unknown field (a typo)', '{"rewrad": 1}', 'rewrad'],
    ['a reward that is not a number', '{"reward": "1"}', 'reward'],
    ['a runaway answer', JSON.stringify({ answer: 'x'.repeat(RESULT_ANSWER_LIMIT + 1) }), 'answer'],
    ['a list', '[1]', 'result'],
  ])('refuses %s, saying why', (_, text, why) => {
    const checked = checkProgramResult(text);
    expect(checked).toHaveProperty('invalid');
    expect((checked as { invalid: string }).invalid).toContain(why);
  });
});
