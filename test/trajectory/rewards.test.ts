import { describe, expect, it } from 'vitest';
import { returnsToGo, shapeReward } from '../../src/trajectory/rewards.js';

describe('shapeReward', () => {
  it('gives +1 for a correct turn and -1 for a wrong one by default', () => {
    expect(shapeReward(true, 0, 1)).toBe(1);
    expect(shapeReward(false, 0, 1)).toBe(-1);
  });

  it('subtracts the bias before scaling, as the seed does', () => {
    // success: ((1 − 0.5)·2 − 0.5)·2 = (1 − 0.5)·2 = 1
    expect(shapeReward(true, 0.5, 2)).toBe(1);
    // failure: ((0 − 0.5)·2 − 0.5)·2 = (−1 − 0.5)·2 = −3
    expect(shapeReward(false, 0.5, 2)).toBe(-3);
  });

  it('scales without a bias', () => {
    expect(shapeReward(true, 0, 3)).toBe(3);
    expect(shapeReward(false, 0, 0.5)).toBe(-0.5);
  });
});

describe('returnsToGo', () => {
  const successes = [false, true, false, true, true];
  const raw = successes.map((success) => shapeReward(success, 0, 1));

  it('shapes the seed example to raw rewards [-1, 1, -1, 1, 1]', () => {
    expect(raw).toEqual([-1, 1, -1, 1, 1]);
  });

  it('sums the rewards from each turn to the end with discount 1', () => {
    // R4 = 1; R3 = 1 + 1 = 2; R2 = −1 + 2 = 1; R1 = 1 + 1 = 2; R0 = −1 + 2 = 1
    expect(returnsToGo(raw, 1)).toEqual([1, 2, 1, 2, 1]);
  });

  it('discounts later rewards by γ per turn', () => {
    // R4 = 1; R3 = 1 + 0.5·1 = 1.5; R2 = −1 + 0.5·1.5 = −0.25;
    // R1 = 1 + 0.5·(−0.25) = 0.875; R0 = −1 + 0.5·0.875 = −0.5625
    expect(returnsToGo(raw, 0.5)).toEqual([-0.5625, 0.875, -0.25, 1.5, 1]);
  });

  it('returns a single turn reward unchanged', () => {
    expect(returnsToGo([-1], 0.5)).toEqual([-1]);
    expect(returnsToGo([3], 1)).toEqual([3]);
  });

  it('returns nothing for no turns', () => {
    expect(returnsToGo([], 1)).toEqual([]);
  });

  it('does not mutate its input', () => {
    const rewards = [-1, 1, -1, 1, 1];
    const returned = returnsToGo(rewards, 1);
    expect(rewards).toEqual([-1, 1, -1, 1, 1]);
    expect(returned).not.toBe(rewards);
  });
});
