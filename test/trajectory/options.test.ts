import { describe, expect, it } from 'vitest';
import { DEFAULT_ROLLOUT_OPTIONS, resolveRolloutOptions } from '../../src/trajectory/options.js';

describe('resolveRolloutOptions', () => {
  it('defaults to the seed: 5 turns, no early stop, discount 1, scaling 1, bias 0, 1024 new tokens, seed layout, stated answers', () => {
    expect(resolveRolloutOptions()).toEqual({
      turns: 5, earlyStop: false, discount: 1, rewardScaling: 1, rewardBias: 0, maxNewTokens: 1024, temperature: 1, layout: 'seed', answerExtraction: 'stated',
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
