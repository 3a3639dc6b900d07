import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLOUT_OPTIONS, resolveRolloutOptions } from '../../src/trajectory/options.js';
import { DEFAULT_SAMPLING, samplingOf } from '../../src/trajectory/sampling.js';

describe('resolveRolloutOptions', () => {
  it('defaults to the seed: 5 turns, no early stop, discount 1, scaling 1, bias 0, 1024 new tokens, T = 1 untruncated, seed layout, stated answers, turn affinity on', () => {
    expect(resolveRolloutOptions()).toEqual({
      turns: 5,
      earlyStop: false,
      discount: 1,
      rewardScaling: 1,
      rewardBias: 0,
      maxNewTokens: 1024,
      temperature: 1,
      topP: 1,
      topK: -1,
      minP: 0,
      repetitionPenalty: 1,
      layout: 'seed',
      answerExtraction: 'stated',
      turnAffinity: true,
    });
    expect(resolveRolloutOptions({})).toEqual(DEFAULT_ROLLOUT_OPTIONS);
  });

  it('keeps given values and fills the rest, treating undefined as absent', () => {
    const options = resolveRolloutOptions({ turns: 3, discount: 0.9, earlyStop: true, layout: 'concat', rewardBias: undefined });
    expect(options).toEqual({ ...DEFAULT_ROLLOUT_OPTIONS, turns: 3, discount: 0.9, earlyStop: true, layout: 'concat' });
  });

  it('does not share the defaults object with callers', () => {
    const options = resolveRolloutOptions();
    options.turns = 99;
    expect(DEFAULT_ROLLOUT_OPTIONS.turns).toBe(5);
  });

  it('rejects discount 0, naming the field', () => {
    expect(() => resolveRolloutOptions({ discount: 0 })).toThrow(/discount must be in \(0, 1\], got 0/);
  });

  it('rejects a discount above 1', () => {
    expect(() => resolveRolloutOptions({ discount: 1.5 })).toThrow(/discount/);
  });

  it('rejects 0 turns, naming the field', () => {
    expect(() => resolveRolloutOptions({ turns: 0 })).toThrow(/turns must be an integer in \[1, 64\], got 0/);
  });

  it('rejects an unknown layout, naming the field', () => {
    expect(() => resolveRolloutOptions({ layout: 'x' as never })).toThrow(/layout must be "seed" or "concat", got "x"/);
  });

  it('reports every invalid field at once', () => {
    expect(() => resolveRolloutOptions({ turns: 0, discount: 0, layout: 'x' as never })).toThrow(/turns.*discount.*layout/);
  });
});

describe('answerExtraction', () => {
  it('takes math-verify and rejects anything else, naming the choices', () => {
    expect(resolveRolloutOptions({ answerExtraction: 'math-verify' }).answerExtraction).toBe('math-verify');
    expect(() => resolveRolloutOptions({ answerExtraction: 'last-number' as never })).toThrow(/answerExtraction.*"stated" or "math-verify"/);
  });
});

describe('sampling options', () => {
  it('takes a full sampling set and hands it to the workflow as sampling parameters', () => {
    const options = resolveRolloutOptions({ temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 });
    expect(samplingOf(options)).toEqual({ temperature: 0.7, topP: 0.95, topK: 20, minP: 0.05, repetitionPenalty: 1.1 });
  });

  it("fills what options resolved by an earlier release lack with the seed's values", () => {
    expect(samplingOf({ temperature: 0.6 })).toEqual({ ...DEFAULT_SAMPLING, temperature: 0.6 });
  });

  it('accepts the edges of each range: greedy, top_p 1, top_k 1, min_p 1, penalty 2', () => {
    expect(() => resolveRolloutOptions({ temperature: 0, topP: 1, topK: 1, minP: 1, repetitionPenalty: 2 })).not.toThrow();
  });

  it('rejects each sampling parameter out of range, naming the field and the rule', () => {
    expect(() => resolveRolloutOptions({ topP: 0 })).toThrow(/topP must be in \(0, 1\], got 0/);
    expect(() => resolveRolloutOptions({ topP: 1.5 })).toThrow(/topP must be in \(0, 1\], got 1.5/);
    expect(() => resolveRolloutOptions({ minP: -0.1 })).toThrow(/minP must be in \[0, 1\], got -0.1/);
    expect(() => resolveRolloutOptions({ repetitionPenalty: 0 })).toThrow(/repetitionPenalty must be in \(0, 2\], got 0/);
    expect(() => resolveRolloutOptions({ temperature: -0.5 })).toThrow(/temperature must be >= 0, got -0.5/);
  });

  it('takes -1 or a positive integer as top_k, and refuses 0 (SGLang does) and fractions', () => {
    expect(resolveRolloutOptions({ topK: -1 }).topK).toBe(-1);
    expect(resolveRolloutOptions({ topK: 50 }).topK).toBe(50);
    for (const topK of [0, -2, 2.5])
      expect(() => resolveRolloutOptions({ topK })).toThrow(`topK must be -1 (off) or a positive integer, got ${topK}`);
  });
});
