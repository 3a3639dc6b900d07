import { describe, expect, it } from 'vitest';
import { candidateLogits, processedLogprobs } from '../../src/policy/simulated/token-distribution.js';
import { returnedLogprobs } from '../../src/policy/simulated/returned-logprobs.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

const mass = (logprobs: number[]) => logprobs.reduce((sum, lp) => sum + Math.exp(lp), 0);
const kept = (logprobs: number[]) => logprobs.filter((lp) => lp > -Infinity).length;

describe("the simulated model's distribution at one position", () => {
  it('gives the written token exactly the drawn logprob at T = 1, nothing truncated', () => {
    for (const drawn of [-0.01, -0.35, -1.2, -2.3]) expect(processedLogprobs(candidateLogits(drawn), DEFAULT_SAMPLING)[0]).toBeCloseTo(drawn, 12);
  });

  it('keeps the written token the most probable, however unlikely it was drawn, so truncation never removes it', () => {
    for (const drawn of [-0.001, -1, -2.33]) {
      const logits = candidateLogits(drawn);
      expect(Math.max(...logits)).toBe(logits[0]);
      expect(processedLogprobs(logits, { ...DEFAULT_SAMPLING, topK: 1 })[0]).toBe(0);
    }
  });

  it('scales every gap by 1/T', () => {
    const logits = candidateLogits(-0.8);
    const plain = processedLogprobs(logits, DEFAULT_SAMPLING);
    const tempered = processedLogprobs(logits, { ...DEFAULT_SAMPLING, temperature: 0.5 });
    for (const i of [1, 10, 63]) expect(tempered[0]! - tempered[i]!).toBeCloseTo(2 * (plain[0]! - plain[i]!), 10);
    expect(mass(tempered)).toBeCloseTo(1, 12);
  });

  it('renormalises over what top-k, top-p and min-p keep, and returns greedy as untempered', () => {
    const logits = candidateLogits(-0.8);
    const topK = processedLogprobs(logits, { ...DEFAULT_SAMPLING, topK: 2 });
    expect([kept(topK), mass(topK)]).toEqual([2, expect.closeTo(1, 12)]);
    const plain = processedLogprobs(logits, DEFAULT_SAMPLING);
    const topP = processedLogprobs(logits, { ...DEFAULT_SAMPLING, topP: 0.6 });
    // vLLM's rule: the fewest most probable tokens whose mass reaches p stay.
    const needed = [...plain]
      .sort((a, b) => b - a)
      .map(Math.exp)
      .reduce((acc, p) => (acc.sum >= 0.6 ? acc : { sum: acc.sum + p, n: acc.n + 1 }), { sum: 0, n: 0 }).n;
    expect([kept(topP), mass(topP)]).toEqual([needed, expect.closeTo(1, 12)]);
    const minP = processedLogprobs(logits, { ...DEFAULT_SAMPLING, minP: 0.5 });
    expect(plain.filter((lp) => Math.exp(lp) >= 0.5 * Math.exp(plain[0]!)).length).toBe(kept(minP));
    expect(processedLogprobs(logits, { ...DEFAULT_SAMPLING, temperature: 0, topK: 2 })).toEqual(plain);
  });
});

describe('returnedLogprobs', () => {
  const drawn = [-0.2, -0.9, -0.05];
  const ids = [11, 12, 13];
  const sampling = { ...DEFAULT_SAMPLING, temperature: 0.7, topP: 0.9 };

  it("returns the drawn logprobs themselves at the seed's sampling, in either mode", () => {
    expect(returnedLogprobs(ids, drawn, DEFAULT_SAMPLING, 'processed', 0).logprobs).toEqual(drawn);
    expect(returnedLogprobs(ids, drawn, sampling, 'raw', 0).logprobs).toEqual(drawn);
  });

  it("returns the sampling distribution's logprobs from a processed server: higher for the top token at T < 1 and under truncation", () => {
    const { logprobs } = returnedLogprobs(ids, drawn, sampling, 'processed', 0);
    logprobs.forEach((lp, i) => expect(lp).toBeGreaterThan(drawn[i]!));
  });

  it("lists each position's top candidates, the written token first, removed ones at vLLM's -9999", () => {
    const { top } = returnedLogprobs(ids, drawn, { ...DEFAULT_SAMPLING, topK: 2 }, 'processed', 3);
    expect(top!.map((candidates) => candidates[0]![1])).toEqual(ids);
    for (const candidates of top!) expect(candidates[2]![0]).toBe(-9999);
  });
});
