import { expect } from 'vitest';
import type pg from 'pg';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { observationTokens } from '../../src/tokens/conversation-tokens.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { returnsToGo } from '../../src/trajectory/rewards.js';

/** One turn's stored step (`turn_texts.environment_step`) and verdict. */
export interface StoredStep {
  turn: number;
  verdict: string;
  step: {
    observations: { role: string; content: string }[];
    reward: number;
    done: boolean;
    info: Record<string, unknown>;
    /** The environment's own success (release 6 keeps it with the step; absent in steps kept before). */
    success?: boolean;
  } | null;
}

/** The stored steps of a trajectory, by turn. */
export async function storedSteps(pool: pg.Pool, trajectoryId: string): Promise<StoredStep[]> {
  const { rows } = await pool.query<StoredStep>(
    'SELECT turn, verdict, environment_step AS step FROM turn_texts WHERE trajectory_id = $1 ORDER BY turn',
    [trajectoryId],
  );
  return rows;
}

/**
 * The seed invariants (scripts/support/seed-invariants.ts) for a row of any environment: lengths, masks, zero
 * logprobs before each output, raw rewards = the environment's rewards, returns-to-go, and each context equal, token
 * for token, to the previous sequence plus that turn's observation messages as stored, rendered.
 */
export function expectEnvironmentInvariants(row: ExportedTrajectory, tokenizer: ModelTokenizer, steps: StoredStep[]): void {
  const turns = row.seqlens.length;
  expect(row.layout).toBe('seed');
  expect(steps.map((s) => s.turn)).toEqual([...Array(turns).keys()]);
  for (const perTurn of [row.seq_no_eos_mask, row.version_start, row.version_end, row.rewards, row.successes, row.raw_rewards, row.prompt_lens])
    expect(perTurn).toHaveLength(turns);
  const total = row.seqlens.reduce((a, b) => a + b, 0);
  expect(row.packed_input_ids).toHaveLength(total);
  expect(row.prompt_mask).toHaveLength(total);
  expect(row.packed_logprobs).toHaveLength(total - turns);
  expect(row.prompt_lens[0]).toBe(row.packed_prompts.length);
  expect(row.raw_rewards).toEqual(steps.map((s) => s.step!.reward));
  row.rewards.forEach((value, t) => expect(value).toBeCloseTo(returnsToGo(row.raw_rewards, 1)[t]!, 9));
  let idOffset = 0;
  let logprobOffset = 0;
  let previous: number[] | undefined;
  for (let t = 0; t < turns; t++) {
    const length = row.seqlens[t]!;
    const contextLen = row.prompt_lens[t]!;
    const sequence = row.packed_input_ids.slice(idOffset, idOffset + length);
    expect(row.prompt_mask.slice(idOffset, idOffset + length)).toEqual([...Array(contextLen).fill(true), ...Array(length - contextLen).fill(false)]);
    const logprobs = row.packed_logprobs.slice(logprobOffset, logprobOffset + length - 1);
    expect(logprobs.slice(0, contextLen - 1).every((lp) => lp === 0)).toBe(true);
    expect(logprobs.slice(contextLen - 1).every((lp) => lp <= 0)).toBe(true);
    expect(row.seq_no_eos_mask[t]).toBe(sequence[length - 1] !== tokenizer.eosTokenId);
    if (previous) {
      const observations = observationTokens(tokenizer, steps[t - 1]!.step!.observations, !row.seq_no_eos_mask[t - 1]!).ids;
      expect(sequence.slice(0, contextLen)).toEqual([...previous, ...observations]);
    } else {
      expect(sequence.slice(0, contextLen)).toEqual(row.packed_prompts);
    }
    previous = sequence;
    idOffset += length;
    logprobOffset += length - 1;
  }
}
