import { z } from 'zod';

/**
 * Proof that a server serves the weights a version promises (issue 33). The publisher computes a reference from the
 * weights it saved: the logprob of each token of a fixed sequence after the tokens before it
 * (`python -m ratchet_rollouts.weights_probe`, or `probe_reference(model)` from the trainer's memory). After loading a
 * version, a GPU worker has its server score the same sequence and compares. A checksum of the files would not do: a
 * server can hold the right bytes and compute from a stale copy derived from them (vLLM 0.32's CPU head of a tied model).
 */

/** What `ratchet_rollouts.weights_probe` writes, stored with the version (`policy_versions.probe_reference`). */
export const probeReference = z.object({
  token_ids: z.array(z.number().int().nonnegative()).min(8).max(4_096),
  /** Per position; the first is null (nothing precedes it). */
  logprobs: z.array(z.number().finite().max(0).nullable()).min(8).max(4_096),
  dtype: z.string().max(32).optional(),
}).strict().refine((reference) => reference.token_ids.length === reference.logprobs.length, 'token_ids and logprobs differ in length')
  .refine((reference) => reference.logprobs.slice(1).every((value) => value !== null), 'only the first logprob may be null');
export type ProbeReference = z.infer<typeof probeReference>;

/**
 * Parity bounds between a server and the reference, in nats per token. A server computes in its own dtype and kernels
 * (vLLM on CPU in bf16 here) and the reference in float32 from the same bf16 weights: measured on the project's tiny
 * Qwen3 models, a correct reload is off by a mean of ~0.002 and at most ~0.02, a stale tied head (the new body with the
 * old output head) by a mean of ~0.02-0.05 on these near-uniform random models and by ~2 on a trained one (issue 33).
 * The bounds sit between the two, tight enough for the tiny models the tests can afford.
 */
export const PROOF_BOUNDS = { meanAbsDelta: 0.01, maxAbsDelta: 0.1 } as const;

export interface ProofFigures {
  tokens: number;
  meanAbsDelta: number;
  maxAbsDelta: number;
}

export type ProofVerdict = { proven: true; figures: ProofFigures } | { proven: false; figures: ProofFigures | undefined; reason: string };

/** Compares what the server scored (per position, first null) with the reference. */
export function judgeProbe(reference: ProbeReference, served: readonly (number | null)[], bounds: { meanAbsDelta: number; maxAbsDelta: number } = PROOF_BOUNDS): ProofVerdict {
  if (served.length !== reference.logprobs.length) {
    return { proven: false, figures: undefined, reason: `the server scored ${served.length} positions of the ${reference.logprobs.length}-token probe` };
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
      proven: false, figures,
      reason: `served logprobs differ from the published weights' by a mean of ${figures.meanAbsDelta.toFixed(4)} (bound ${bounds.meanAbsDelta}) and at most ${figures.maxAbsDelta.toFixed(4)} (bound ${bounds.maxAbsDelta}) nats over ${figures.tokens} tokens`,
    };
  }
  return { proven: true, figures };
}

/** A version the server cannot be shown to serve: never a token under its tag from this server. */
export class WeightsRefused extends Error {
  override readonly name = 'WeightsRefused';
  constructor(readonly version: number, readonly server: string, reason: string, readonly figures?: ProofFigures) {
    super(`policy version ${version} refused on ${server}: ${reason}`);
  }
}
