import { describe, expect, it } from 'vitest';
import { packTrajectory, type TurnTokens } from '../../src/trajectory/packing.js';
import { unpackTurns } from '../../src/trajectory/unpacking.js';

// An agent's three calls: the second extends the first (feedback [20, 21]); the third rewrote its history, so its
// context is a fresh rendering [1, 2, 50, 51] (forkIds on turn 1) that does not start with turn 1's sequence.
const prompt = [1, 2, 3];
const turns: TurnTokens[] = [
  { outputIds: [10, 11], outputLogprobs: [-0.1, -0.2], outputVersions: [4, 4], feedbackIds: [20, 21], noEos: false },
  { outputIds: [30], outputLogprobs: [-0.3], outputVersions: [5], feedbackIds: [], forkIds: [1, 2, 50, 51], noEos: false },
  { outputIds: [40, 41], outputLogprobs: [-0.4, -0.5], outputVersions: [6, 6], feedbackIds: [], noEos: true },
];

describe('packing a trajectory whose agent forked', () => {
  it('seed layout: the turn after the fork has the fork as its context, and only its own output is trained on', () => {
    const packed = packTrajectory(prompt, turns, 'seed');
    expect(packed.seqlens).toEqual([5, 8, 6]);
    expect(packed.promptLens).toEqual([3, 7, 4]);
    expect(packed.packedInputIds).toEqual([1, 2, 3, 10, 11, 1, 2, 3, 10, 11, 20, 21, 30, 1, 2, 50, 51, 40, 41]);
    expect(packed.promptMask.slice(13)).toEqual([1, 1, 1, 1, 0, 0]);
    expect(packed.tokenVersions.slice(13)).toEqual([-1, -1, -1, -1, 6, 6]);
    expect(packed.packedLogprobs.slice(-5)).toEqual([0, 0, 0, -0.4, -0.5]);
  });

  it('concat layout: the fork closes the sequence and starts another; each keeps its own logprob shift', () => {
    const packed = packTrajectory(prompt, turns, 'concat');
    expect(packed.seqlens).toEqual([8, 6]);
    expect(packed.packedInputIds).toEqual([1, 2, 3, 10, 11, 20, 21, 30, 1, 2, 50, 51, 40, 41]);
    // Where each turn's output starts in packedInputIds.
    expect(packed.promptLens).toEqual([3, 7, 12]);
    expect(packed.promptMask).toEqual([1, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 1, 0, 0]);
    // 7 + 5 entries: each sequence drops its first position.
    expect(packed.packedLogprobs).toEqual([0, 0, -0.1, -0.2, 0, 0, -0.3, 0, 0, 0, -0.4, -0.5]);
  });

  it.each(['seed', 'concat'] as const)('%s layout unpacks back to the turns, the fork as the next context', (layout) => {
    const packed = packTrajectory(prompt, turns, layout);
    const unpacked = unpackTurns({ layout, ...packed, outputLens: turns.map((t) => t.outputIds.length) });
    expect(unpacked.map((t) => t.outputIds)).toEqual(turns.map((t) => t.outputIds));
    expect(unpacked.map((t) => t.outputLogprobs.map(Math.fround))).toEqual(turns.map((t) => t.outputLogprobs.map(Math.fround)));
    expect(unpacked.map((t) => t.outputVersions)).toEqual(turns.map((t) => t.outputVersions));
    expect(unpacked.map((t) => t.contextLen)).toEqual([3, 7, 4]);
    expect(unpacked[0]!.feedbackIds).toEqual([20, 21]);
    expect(unpacked[1]).toMatchObject({ feedbackIds: [], forkIds: [1, 2, 50, 51] });
    expect(unpacked[2]!.feedbackIds).toEqual([]);
  });
});
