import { expect } from 'vitest';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { feedbackTokens } from '../../src/tokens/conversation-tokens.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { returnsToGo, shapeReward } from '../../src/trajectory/rewards.js';

/**
 * Checks one exported seed-layout row against design.md's semantics: lengths, masks, zero logprobs before
 * each output, returns-to-go from the per-turn successes, and each context equal, token for token, to the
 * previous sequence plus that turn's feedback.
 */
export function expectSeedInvariants(row: ExportedTrajectory, tokenizer: ModelTokenizer, reward = { bias: 0, scaling: 1, discount: 1 }): void {
  const turns = row.seqlens.length;
  expect(row.layout).toBe('seed');
  expect(row.prompt_lens).toHaveLength(turns);
  for (const perTurn of [row.seq_no_eos_mask, row.version_start, row.version_end, row.rewards, row.successes, row.raw_rewards])
    expect(perTurn).toHaveLength(turns);
  const total = row.seqlens.reduce((a, b) => a + b, 0);
  expect(row.packed_input_ids).toHaveLength(total);
  expect(row.prompt_mask).toHaveLength(total);
  expect(row.packed_logprobs).toHaveLength(total - turns);
  expect(row.packed_input_ids.slice(0, row.packed_prompts.length)).toEqual(row.packed_prompts);
  expect(row.prompt_lens[0]).toBe(row.packed_prompts.length);

  const raw = row.successes.map((success) => shapeReward(success, reward.bias, reward.scaling));
  expect(row.raw_rewards).toEqual(raw);
  row.rewards.forEach((value, t) => expect(value).toBeCloseTo(returnsToGo(raw, reward.discount)[t]!, 9));
  expect(row.birth_time).toBeGreaterThan(1.6e12);

  let idOffset = 0;
  let logprobOffset = 0;
  let previous: number[] | undefined;
  for (let t = 0; t < turns; t++) {
    const length = row.seqlens[t]!;
    const contextLen = row.prompt_lens[t]!;
    const sequence = row.packed_input_ids.slice(idOffset, idOffset + length);
    const mask = row.prompt_mask.slice(idOffset, idOffset + length);
    const logprobs = row.packed_logprobs.slice(logprobOffset, logprobOffset + length - 1);
    expect(mask).toEqual([...Array(contextLen).fill(true), ...Array(length - contextLen).fill(false)]);
    expect(logprobs.slice(0, contextLen - 1).every((lp) => lp === 0)).toBe(true);
    expect(logprobs.slice(contextLen - 1).every((lp) => lp <= 0)).toBe(true);
    expect(length).toBeGreaterThan(contextLen);
    const endsWithEos = sequence[length - 1] === tokenizer.eosTokenId;
    expect(row.seq_no_eos_mask[t]).toBe(!endsWithEos);
    if (previous) {
      const feedback = feedbackTokens(tokenizer, row.successes[t - 1]!, !row.seq_no_eos_mask[t - 1]!).ids;
      expect(sequence.slice(0, contextLen)).toEqual([...previous, ...feedback]);
    } else {
      expect(sequence.slice(0, contextLen)).toEqual(row.packed_prompts);
    }
    expect(row.version_start[t]).toBeLessThanOrEqual(row.version_end[t]!);
    previous = sequence;
    idOffset += length;
    logprobOffset += length - 1;
  }
}

/**
 * Checks `token_versions` against the seed-layout row: one entry per packed token, −1 on prompt and feedback,
 * each turn's output stamped with non-decreasing versions from version_start to version_end, and the context
 * of each sequence carrying the versions its tokens were generated under.
 */
export function expectTokenVersions(row: ExportedTrajectory): void {
  expect(row.token_versions).toHaveLength(row.packed_input_ids.length);
  let offset = 0;
  let previous: number[] | undefined;
  row.seqlens.forEach((length, t) => {
    const contextLen = row.prompt_lens[t]!;
    const versions = row.token_versions.slice(offset, offset + length);
    const output = versions.slice(contextLen);
    expect(output.every((v) => v >= 0)).toBe(true);
    expect(output.every((v, i) => i === 0 || v >= output[i - 1]!)).toBe(true);
    expect(output[0]).toBe(row.version_start[t]);
    expect(output[output.length - 1]).toBe(row.version_end[t]);
    if (previous) {
      const feedbackLen = contextLen - previous.length;
      expect(versions.slice(0, contextLen)).toEqual([...previous, ...Array(feedbackLen).fill(-1)]);
    } else {
      expect(versions.slice(0, contextLen)).toEqual(Array(contextLen).fill(-1));
    }
    previous = versions;
    offset += length;
  });
}
