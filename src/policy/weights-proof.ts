import { z } from 'zod';

/**
 * Proof that a server serves the weights a version promises (issue 33). The publisher computes a reference from the
 * weights it saved: the logprob of each token of a fixed sequence after the tokens before it
 * (`python -m ratchet_rollouts.weights_probe`, or `probe_reference(model)` from the trainer's memory). After loading a
 * version, a GPU worker has its server score the same sequence and compares. A checksum of the files would not do: a
 * server can hold the right bytes and compute from a stale copy derived from them (vLLM 0.32's CPU head of a tied model).
 */

/** What `ratchet_rollouts.weights_probe` writes, stored with the version (`policy_versions.probe_reference`). */
export const probeReference = z
  .object({
    token_ids: z.array(z.number().int().nonnegative()).min(8).max(4_096),
    /** Per position; the first is null (nothing precedes it). */
    logprobs: z.array(z.number().finite().max(0).nullable()).min(8).max(4_096),
    dtype: z.string().max(32).optional(),
  })
  .strict()
  .refine((reference) => reference.token_ids.length === reference.logprobs.length, 'token_ids and logprobs differ in length')
  .refine((reference) => reference.logprobs.slice(1).every((value) => value !== null), 'only the first logprob may be null');
export type ProbeReference = z.infer<typeof probeReference>;

/**
 * Parity bounds between a server and the reference, in nats per token (the issue's own bar for a trainer's held-out
 * recomputation is a mean of 0.02). Measured with vLLM 0.32 on CPU: a correct load is off by a mean of 0.0011-0.0065
 * and at most 0.023 (tiny Qwen3 in float32 and bf16; a 2-layer model of Qwen3-0.6B's width in bf16); the hybrid vLLM's
 * own reload serves for a tied model (new body, start-up head) by a mean of 0.24 (tiny, float32) and 0.57 (0.6B-wide),
 * and ~2 on a trained model (issue 33); the other version's weights by 0.22-0.57. A server of another dtype or kernel
 * may need wider bounds: they are the watcher's option.
 */
export const PROOF_BOUNDS = { meanAbsDelta: 0.02, maxAbsDelta: 0.25 } as const;

export interface ProofFigures {
  tokens: number;
  meanAbsDelta: number;
  maxAbsDelta: number;
}

export type ProofVerdict = { proven: true; figures: ProofFigures } | { proven: false; figures: ProofFigures | undefined; reason: string };

/** Compares what the server scored (per position, first null) with the reference. */
export function judgeProbe(
  reference: ProbeReference,
  served: readonly (number | null)[],
  bounds: { meanAbsDelta: number; maxAbsDelta: number } = PROOF_BOUNDS,
): ProofVerdict {
  if (served.length !== reference.logprobs.length) {
    return {
      proven: false,
      figures: undefined,
      reason: `the server scored ${served.length} positions of the ${reference.logprobs.length}-token probe`,
    };
  }
  let sum = 0;
  let max = 0;
  for (let i = 1; i < served.length; i++) {
    const value = served[i];
    if (value === null || value === undefined || !Number.isFinite(value)) {
      return { proven: false, figures: undefined, reason: `the server gave no finite logprob at probe position ${i}` };
    }
    const delta = Math.abs(value - reference.logprobs[i]!);
    sum += delta;
    max = Math.max(max, delta);
  }
  const figures = { tokens: served.length - 1, meanAbsDelta: sum / (served.length - 1), maxAbsDelta: max };
  if (figures.meanAbsDelta > bounds.meanAbsDelta || figures.maxAbsDelta > bounds.maxAbsDelta) {
    return {
      proven: false,
      figures,
      reason: `served logprobs differ from the published weights' by a mean of ${figures.meanAbsDelta.toFixed(4)} (bound ${bounds.meanAbsDelta}) and at most ${figures.maxAbsDelta.toFixed(4)} (bound ${bounds.maxAbsDelta}) nats over ${figures.tokens} tokens`,
    };
  }
  return { proven: true, figures };
}

/** A version the server cannot be shown to serve: never a token under its tag from this server. */
export class WeightsRefused extends Error {
  override readonly name = 'WeightsRefused';
  constructor(
    readonly version: number,
    readonly server: string,
    reason: string,
    readonly figures?: ProofFigures,
    /** The ledger's error_type: the probe missed, could not be run, or there was nothing to prove against. */
    readonly kind: 'WeightsMismatch' | 'ProbeFailed' | 'WeightsUnproven' = figures ? 'WeightsMismatch' : 'WeightsUnproven',
  ) {
    super(`policy version ${version} refused on ${server}: ${reason}`);
  }
}

/** The server refused the checkpoint before loading it (Ratchet's vLLM extension): it serves what it served before. */
export class CheckpointRefused extends Error {
  override readonly name = 'CheckpointRefused';
  constructor(
    readonly server: string,
    reason: string,
  ) {
    super(`inference server ${server} refused the checkpoint: ${reason}`);
  }
}
