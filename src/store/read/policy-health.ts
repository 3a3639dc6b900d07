import type pg from 'pg';
import { decodeFloat32, decodeInt32 } from '../../tokens/token-codec.js';

/** How many of a run's newest completed trajectories the policy-health figures are read from (their token arrays). */
export const POLICY_HEALTH_WINDOW = 500;

/** The behaviour policy's tokens of one policy version: the logprobs the server reported for the tokens it sampled. */
export interface VersionLogprobs {
  version: number;
  /** Generated tokens whose logprob was stored (prompt and feedback tokens are not the policy's). */
  tokens: number;
  /** Mean log p(token) of the sampled tokens under the policy that sampled them. */
  meanLogprob: number;
  /**
   * −meanLogprob: a Monte-Carlo estimate of the per-token entropy, but only when every token was sampled from the
   * policy's own distribution (temperature 1, no top-p, top-k or min-p cut); null otherwise, or when unknown.
   */
  entropyEstimate: number | null;
}

export interface PolicyHealth {
  /** Completed trajectories read: the newest, at most POLICY_HEALTH_WINDOW. */
  trajectories: number;
  /** Whether each of them was sampled untruncated at temperature 1 (so −mean logprob estimates the entropy). */
  plainSampling: boolean;
  byVersion: VersionLogprobs[];
}

/**
 * The behaviour policy's mean logprob per policy version, from the stored token arrays of a run's newest completed
 * trajectories (packed_logprobs, prompt_mask, token_versions): each generated token counts under the version that
 * generated it. Entropy itself is not stored (the servers report the sampled token's logprob only).
 */
export async function policyHealth(pool: pg.Pool, runId: string, limit = POLICY_HEALTH_WINDOW): Promise<PolicyHealth> {
  const { rows } = await pool.query<{
    seqlens: number[] | null;
    packed_logprobs: Buffer | null;
    prompt_mask: Buffer | null;
    token_versions: Buffer | null;
    plain: boolean;
  }>(
    `SELECT seqlens, packed_logprobs, prompt_mask, token_versions,
            coalesce(temperature = 1 AND top_p >= 1 AND top_k <= 0 AND min_p <= 0 AND repetition_penalty = 1, false) AS plain
     FROM trajectories WHERE run_id = $1 AND status = 'completed' ORDER BY finished_at DESC LIMIT $2`,
    [runId, limit],
  );
  // (Rows without token arrays, stored before they were kept, are read and skipped: a filter on them could walk the run.)
  const sums = new Map<number, { tokens: number; logprobs: number }>();
  for (const row of rows) {
    if (!row.packed_logprobs || !row.prompt_mask || !row.token_versions || !row.seqlens) continue;
    addTokens(sums, row.seqlens, decodeFloat32(row.packed_logprobs), row.prompt_mask, decodeInt32(row.token_versions));
  }
  const plainSampling = rows.length > 0 && rows.every((row) => row.plain);
  return {
    trajectories: rows.length,
    plainSampling,
    byVersion: [...sums.entries()]
      .sort(([a], [b]) => a - b)
      .map(([version, sum]) => ({
        version,
        tokens: sum.tokens,
        meanLogprob: sum.logprobs / sum.tokens,
        entropyEstimate: plainSampling ? -sum.logprobs / sum.tokens : null,
      })),
  };
}

/**
 * One trajectory's generated tokens into the per-version sums. Each packed sequence of length L holds L−1 logprobs
 * (entry i is log p(token i+1)), so the token at position k > 0 of a sequence has its logprob at k − 1 of the
 * sequence's logprobs; a token is the policy's where prompt_mask is 0, under the version token_versions gives it.
 */
export function addTokens(
  sums: Map<number, { tokens: number; logprobs: number }>,
  seqlens: readonly number[],
  logprobs: readonly number[],
  mask: Uint8Array,
  versions: readonly number[],
): void {
  let token = 0;
  let logprob = 0;
  for (const length of seqlens) {
    for (let k = 1; k < length; k++) {
      const at = token + k;
      const version = versions[at];
      const value = logprobs[logprob + k - 1];
      if (mask[at] !== 0 || version === undefined || version < 0 || value === undefined || !Number.isFinite(value)) continue;
      const sum = sums.get(version) ?? { tokens: 0, logprobs: 0 };
      sum.tokens += 1;
      sum.logprobs += value;
      sums.set(version, sum);
    }
    token += length;
    logprob += Math.max(0, length - 1);
  }
}
