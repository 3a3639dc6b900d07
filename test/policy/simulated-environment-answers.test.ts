import { describe, expect, it } from 'vitest';
import { TOOL_INSTRUCTION, pythonBlocks } from '../../src/environments/math-python-tool.js';
import { writeEnvironmentAnswer } from '../../src/policy/simulated/environment-answer-writer.js';
import { seededRandom } from '../../src/policy/simulated/policy-config.js';

const GAME = '<|im_start|>user\nI am thinking of a whole number from 1 to 20. Guess it, answering with \\boxed{n}.<|im_end|>\n';
const ASSISTANT = '<|im_start|>assistant\n';

describe('the simulated policy in other environments', () => {
  it('writes nothing (and draws nothing) for a math or code prompt', () => {
    let draws = 0;
    const random = () => {
      draws += 1;
      return 0.5;
    };
    expect(
      writeEnvironmentAnswer('<|im_start|>user\nWhat is 1+1?\nPlease reason step by step.<|im_end|>\n', () => ['2'], true, 2, random),
    ).toBeUndefined();
    expect(draws).toBe(0);
  });

  it('plays guess-the-number inside what "Too low." and "Too high." left open', () => {
    const context = `${GAME}${ASSISTANT}My guess is \\boxed{10}.<|im_end|>\n<|im_start|>user\nToo low.<|im_end|>\n${ASSISTANT}My guess is \\boxed{15}.<|im_end|>\n<|im_start|>user\nToo high.<|im_end|>\n${ASSISTANT}`;
    const random = seededRandom(4);
    for (let i = 0; i < 50; i++) {
      const guess = Number(/\\boxed\{(\d+)\}/.exec(writeEnvironmentAnswer(context, () => undefined, true, 1, random)!)![1]);
      expect(guess).toBeGreaterThanOrEqual(11);
      expect(guess).toBeLessThanOrEqual(14);
    }
  });

  it("runs a program on a math-python-tool prompt's first turn some of the time, and answers after it", () => {
    const prompt = `<|im_start|>user\nWhat is 1/2 + 1/4?\n\n${TOOL_INSTRUCTION}<|im_end|>\n${ASSISTANT}`;
    const random = seededRandom(9);
    const first = Array.from({ length: 40 }, () => writeEnvironmentAnswer(prompt, () => ['\\frac{3}{4}'], true, 1, random)!);
    const programs = first.filter((text) => pythonBlocks(text).code !== null);
    expect(programs.length).toBeGreaterThan(10);
    expect(programs.length).toBeLessThan(40);
    expect(pythonBlocks(programs[0]!).code).toBe('answer = "\\\\frac{3}{4}"\nprint(answer)');
    const later = `${prompt}${programs[0]}<|im_end|>\n<|im_start|>user\n<tool_response>\n\\frac{3}{4}\n</tool_response><|im_end|>\n${ASSISTANT}`;
    for (let i = 0; i < 10; i++)
      expect(writeEnvironmentAnswer(later, () => ['\\frac{3}{4}'], true, 1, random)).toMatch(/\\boxed\{\\frac\{3\}\{4\}\}\$\.$/);
  });
});
