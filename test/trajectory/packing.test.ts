import { describe, expect, it } from 'vitest';
import { packTrajectory, type TurnTokens } from '../../src/trajectory/packing.js';
import { seededRandom } from '../../src/policy/simulated/policy-config.js';

const prompt = [1, 2, 3];
const turns: TurnTokens[] = [
  { outputIds: [10, 11], outputLogprobs: [-0.1, -0.2], outputVersions: [4, 5], feedbackIds: [20, 21, 22], noEos: false },
  { outputIds: [30], outputLogprobs: [-0.3], outputVersions: [5], feedbackIds: [], noEos: true },
];

describe('packTrajectory, seed layout', () => {
  // C_0 = [1,2,3] (P_0 = 3, L_0 = 5); C_1 = prompt + O_0 + F_0 = [1,2,3,10,11,20,21,22] (P_1 = 8, L_1 = 9).
  const packed = packTrajectory(prompt, turns, 'seed');

  it('repeats the history: C_0 O_0 then C_1 O_1', () => {
    expect(packed.packedInputIds).toEqual([1, 2, 3, 10, 11, /* turn 1: */ 1, 2, 3, 10, 11, 20, 21, 22, 30]);
  });

  it("puts P_t − 1 zeros before each turn's output logprobs", () => {
    expect(packed.packedLogprobs).toEqual([0, 0, -0.1, -0.2, /* turn 1: */ 0, 0, 0, 0, 0, 0, 0, -0.3]);
  });

  it('masks the context of each turn with ones and its output with zeros', () => {
    expect(packed.promptMask).toEqual([1, 1, 1, 0, 0, /* turn 1: */ 1, 1, 1, 1, 1, 1, 1, 1, 0]);
  });

  it('stamps generated tokens with their version wherever they appear and prompt/feedback with −1', () => {
    expect(packed.tokenVersions).toEqual([-1, -1, -1, 4, 5, /* turn 1: */ -1, -1, -1, 4, 5, -1, -1, -1, 5]);
  });

  it('reports L_t, P_t and the no-EOS flag per turn', () => {
    expect(packed.seqlens).toEqual([5, 9]);
    expect(packed.promptLens).toEqual([3, 8]);
    expect(packed.seqNoEosMask).toEqual([false, true]);
  });
});

describe('packTrajectory, concat layout', () => {
  const packed = packTrajectory(prompt, turns, 'concat');

  it('packs one sequence: prompt, O_0, F_0, O_1 (no feedback after the last turn)', () => {
    expect(packed.packedInputIds).toEqual([1, 2, 3, 10, 11, 20, 21, 22, 30]);
    expect(packed.seqlens).toEqual([9]);
  });

  it('puts the logprob of token i+1 at entry i, zero where token i+1 was not generated', () => {
    // token positions:     1  2  3  10    11    20 21 22 30
    // logprob of position: 0  0  0  -0.1  -0.2  0  0  0  -0.3  → drop position 0
    expect(packed.packedLogprobs).toEqual([0, 0, -0.1, -0.2, 0, 0, 0, -0.3]);
    expect(packed.packedLogprobs).toHaveLength(packed.packedInputIds.length - 1);
  });

  it('masks prompt and feedback with ones and outputs with zeros', () => {
    expect(packed.promptMask).toEqual([1, 1, 1, 0, 0, 1, 1, 1, 0]);
  });

  it('stamps one version per token, −1 where the policy did not generate it', () => {
    expect(packed.tokenVersions).toEqual([-1, -1, -1, 4, 5, -1, -1, -1, 5]);
  });

  it('still reports P_t and the no-EOS flag per turn', () => {
    expect(packed.promptLens).toEqual([3, 8]);
    expect(packed.seqNoEosMask).toEqual([false, true]);
  });
});

describe('packTrajectory, rejected input', () => {
  it('throws when a turn has a different number of ids and logprobs, naming the turn', () => {
    const bad: TurnTokens[] = [turns[0]!, { outputIds: [30, 31], outputLogprobs: [-0.3], outputVersions: [0, 0], feedbackIds: [], noEos: false }];
    expect(() => packTrajectory(prompt, bad, 'seed')).toThrow(/turn 1: 2 output ids but 1 logprobs/);
    expect(() => packTrajectory(prompt, bad, 'concat')).toThrow(/turn 1/);
  });

  it('throws when a turn has a different number of ids and versions', () => {
    const bad: TurnTokens[] = [{ outputIds: [30, 31], outputLogprobs: [-0.3, -0.1], outputVersions: [0], feedbackIds: [], noEos: false }];
    expect(() => packTrajectory(prompt, bad, 'seed')).toThrow(/turn 0: 2 output ids but 2 logprobs and 1 versions/);
  });

  it('throws on a trajectory with no turns', () => {
    expect(() => packTrajectory(prompt, [], 'seed')).toThrow(/no turns/);
    expect(() => packTrajectory(prompt, [], 'concat')).toThrow(/no turns/);
  });

  it('does not mutate the prompt or the turns', () => {
    const promptCopy = [...prompt];
    const turnsCopy = structuredClone(turns);
    packTrajectory(prompt, turns, 'seed');
    packTrajectory(prompt, turns, 'concat');
    expect(prompt).toEqual(promptCopy);
    expect(turns).toEqual(turnsCopy);
  });
});

function randomTrajectory(random: () => number): { promptIds: number[]; turns: TurnTokens[] } {
  const int = (lo: number, hi: number) => lo + Math.floor(random() * (hi - lo + 1));
  const ids = (n: number) => Array.from({ length: n }, () => int(1, 150_000));
  const turnCount = int(1, 6);
  const randomTurns = Array.from({ length: turnCount }, (_, t): TurnTokens => {
    const outputLen = int(1, 12);
    return {
      outputIds: ids(outputLen),
      // strictly negative, so a misplaced zero or logprob shows
      outputLogprobs: Array.from({ length: outputLen }, () => -(0.001 + random() * 3)),
      outputVersions: Array.from({ length: outputLen }, () => t + int(0, 1)),
      feedbackIds: t < turnCount - 1 ? ids(int(0, 6)) : [],
      noEos: random() < 0.3,
    };
  });
  return { promptIds: ids(int(1, 20)), turns: randomTurns };
}

const sum = (values: readonly number[]) => values.reduce((a, b) => a + b, 0);

describe('packTrajectory invariants over random trajectories', () => {
  const random = seededRandom(20240611);
  const cases = Array.from({ length: 50 }, () => randomTrajectory(random));

  it('keeps seqlens, ids and mask lengths consistent, and logprobs at Σ(L_t − 1)', () => {
    for (const { promptIds, turns: trajectory } of cases) {
      const packed = packTrajectory(promptIds, trajectory, 'seed');
      expect(packed.seqlens).toHaveLength(trajectory.length);
      expect(packed.promptLens).toHaveLength(trajectory.length);
      expect(sum(packed.seqlens)).toBe(packed.packedInputIds.length);
      expect(packed.promptMask).toHaveLength(packed.packedInputIds.length);
      expect(packed.packedLogprobs).toHaveLength(sum(packed.seqlens.map((length) => length - 1)));
      expect(packed.seqNoEosMask).toEqual(trajectory.map((turn) => turn.noEos));
      trajectory.forEach((turn, t) => expect(packed.seqlens[t]).toBe(packed.promptLens[t]! + turn.outputIds.length));
    }
  });

  it('starts each sequence with the previous one followed by its feedback, never re-tokenized', () => {
    for (const { promptIds, turns: trajectory } of cases) {
      const packed = packTrajectory(promptIds, trajectory, 'seed');
      const sequences = split(packed.packedInputIds, packed.seqlens);
      expect(sequences[0]!.slice(0, promptIds.length)).toEqual(promptIds);
      expect(packed.promptLens[0]).toBe(promptIds.length);
      for (let t = 0; t + 1 < sequences.length; t++) {
        const previous = sequences[t]!;
        const next = sequences[t + 1]!;
        const feedback = trajectory[t]!.feedbackIds;
        expect(next.slice(0, previous.length + feedback.length)).toEqual([...previous, ...feedback]);
        expect(packed.promptLens[t + 1]).toBe(previous.length + feedback.length);
      }
      sequences.forEach((sequence, t) => expect(sequence.slice(packed.promptLens[t])).toEqual(trajectory[t]!.outputIds));
    }
  });

  it("puts zeros before each output's logprobs and masks exactly the outputs", () => {
    for (const { promptIds, turns: trajectory } of cases) {
      const packed = packTrajectory(promptIds, trajectory, 'seed');
      const logprobs = split(
        packed.packedLogprobs,
        packed.seqlens.map((length) => length - 1),
      );
      const masks = split(packed.promptMask, packed.seqlens);
      trajectory.forEach((turn, t) => {
        const contextLen = packed.promptLens[t]!;
        expect(logprobs[t]).toEqual([...new Array<number>(contextLen - 1).fill(0), ...turn.outputLogprobs]);
        expect(masks[t]).toEqual([...new Array<number>(contextLen).fill(1), ...new Array<number>(turn.outputIds.length).fill(0)]);
      });
    }
  });

  it('packs the concat layout as the last seed sequence, with the loss mask on outputs only', () => {
    for (const { promptIds, turns: trajectory } of cases) {
      const seed = packTrajectory(promptIds, trajectory, 'seed');
      const concat = packTrajectory(promptIds, trajectory, 'concat');
      const lastSeed = split(seed.packedInputIds, seed.seqlens).at(-1)!;
      expect(concat.packedInputIds).toEqual(lastSeed);
      expect(concat.seqlens).toEqual([lastSeed.length]);
      expect(concat.promptLens).toEqual(seed.promptLens);
      expect(concat.packedLogprobs).toHaveLength(lastSeed.length - 1);
      expect(concat.promptMask).toHaveLength(lastSeed.length);
      // every output token i+1 (mask 0) has its own logprob at entry i; every other entry is zero
      const generatedLogprobs = concat.promptMask.flatMap((mask, i) => (mask === 0 ? [concat.packedLogprobs[i - 1]] : []));
      expect(generatedLogprobs).toEqual(trajectory.flatMap((turn) => turn.outputLogprobs));
      concat.promptMask.forEach((mask, i) => {
        if (mask === 1 && i > 0) expect(concat.packedLogprobs[i - 1]).toBe(0);
      });
    }
  });

  it('packs a 100K-token context without overflowing the stack', () => {
    const longPrompt = Array.from({ length: 100_000 }, (_, i) => (i % 150_000) + 1);
    const longTurns: TurnTokens[] = [
      {
        outputIds: new Array(50_000).fill(7),
        outputLogprobs: new Array(50_000).fill(-0.5),
        outputVersions: new Array(50_000).fill(0),
        feedbackIds: new Array(1_000).fill(8),
        noEos: true,
      },
      {
        outputIds: new Array(20_000).fill(9),
        outputLogprobs: new Array(20_000).fill(-0.25),
        outputVersions: new Array(20_000).fill(1),
        feedbackIds: [],
        noEos: false,
      },
    ];
    const seed = packTrajectory(longPrompt, longTurns, 'seed');
    expect(seed.seqlens).toEqual([150_000, 171_000]);
    expect(seed.packedInputIds).toHaveLength(321_000);
    expect(seed.packedLogprobs).toHaveLength(320_998);
    const concat = packTrajectory(longPrompt, longTurns, 'concat');
    expect(concat.packedInputIds).toHaveLength(171_000);
    expect(concat.packedLogprobs).toHaveLength(170_999);
  });
});

function split<T>(values: readonly T[], lengths: readonly number[]): T[][] {
  const parts: T[][] = [];
  let at = 0;
  for (const length of lengths) {
    parts.push(values.slice(at, at + length));
    at += length;
  }
  expect(at).toBe(values.length);
  return parts;
}
