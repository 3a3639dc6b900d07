import { describe, expect, it } from 'vitest';
import { packTrajectory, type TurnTokens } from '../../src/trajectory/packing.js';
import { unpackTurns } from '../../src/trajectory/unpacking.js';
import { groupAdvantages } from '../../src/trajectory/group-advantages.js';
import { splitReasoning } from '../../src/ui/answer-parts.js';

const prompt = [1, 2, 3, 4];
const turns: TurnTokens[] = [
  { outputIds: [10, 11, 12], outputLogprobs: [-0.1, -0.2, -0.3], outputVersions: [0, 0, 1], feedbackIds: [90, 91], noEos: false },
  { outputIds: [20, 21], outputLogprobs: [-1, -2], outputVersions: [1, 1], feedbackIds: [92], noEos: true },
  { outputIds: [30], outputLogprobs: [-0.5], outputVersions: [2], feedbackIds: [93], noEos: false },
];

describe('unpacking a packed trajectory for the viewer', () => {
  for (const layout of ['seed', 'concat'] as const) {
    it(`gives back each turn's output, logprobs, versions and feedback (${layout} layout)`, () => {
      const packed = packTrajectory(prompt, turns, layout);
      const unpacked = unpackTurns({ layout, ...packed, outputLens: turns.map((t) => t.outputIds.length) });
      expect(unpacked.map((t) => t.contextLen)).toEqual([4, 9, 12]);
      expect(unpacked.map((t) => t.outputIds)).toEqual(turns.map((t) => t.outputIds));
      expect(unpacked.map((t) => t.outputLogprobs)).toEqual(turns.map((t) => t.outputLogprobs));
      expect(unpacked.map((t) => t.outputVersions)).toEqual(turns.map((t) => t.outputVersions));
      // The last turn's feedback is never packed: there is no next context to hold it.
      expect(unpacked.map((t) => t.feedbackIds)).toEqual([[90, 91], [92], []]);
    });
  }
});

describe('GRPO advantages of a group', () => {
  it("normalises each turn's returns by the group's mean and standard deviation", () => {
    const advantages = groupAdvantages([[1, 1], [-1, -1], [1]]);
    expect(advantages[0]![0]).toBeCloseTo(0.7071, 3);
    expect(advantages[1]![0]).toBeCloseTo(-1.4142, 3);
    expect(advantages[0]![1]).toBeCloseTo(1, 3);
    expect(advantages[2]![1]).toBeNull();
  });

  it('gives 0, not NaN, when every sample agrees', () => {
    expect(groupAdvantages([[1], [1]])).toEqual([[0], [0]]);
  });
});

describe('splitting reasoning from the answer', () => {
  it('shows <think> apart from what follows it', () => {
    expect(splitReasoning('<think>try 6</think>\nThe answer is $\\boxed{6}$.')).toEqual({
      reasoning: 'try 6',
      answer: 'The answer is $\\boxed{6}$.',
    });
  });

  it('treats an unclosed <think> (cut off by the length limit) as all reasoning', () => {
    expect(splitReasoning('<think>still going')).toEqual({ reasoning: 'still going', answer: '' });
  });

  it('leaves an answer without reasoning whole', () => {
    expect(splitReasoning('  x = 6  ')).toEqual({ reasoning: null, answer: '  x = 6  ' });
  });
});
