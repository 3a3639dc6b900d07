/**
 * One optimiser step of a trainer, as it reports it (docs/training-steps.md): the policy version it published after
 * the step, and its metrics by name. The names below are the ones the UI charts and `ratchet runs status` reads;
 * any other number a trainer reports is kept beside them.
 */
export const TRAINING_METRICS = [
  'loss',
  'mean_reward',
  // |Δ| between the stored behaviour logprobs and the trainer's recomputation (nats): the parity check.
  'parity_mean_abs',
  'parity_p99_abs',
  'parity_max_abs',
  // Share of tokens whose importance ratio fell outside the clip range.
  'ratio_outside',
  // Policy version of the step minus the version of each consumed token, against the run's η.
  'version_lag_mean',
  'version_lag_max',
  'eta',
  'tokens',
  'trajectories',
  'step_seconds',
] as const;

export type TrainingMetric = (typeof TRAINING_METRICS)[number];

export interface TrainingStep {
  runId: string;
  step: number;
  /** The version the trainer published after this step. */
  policyVersion: number;
  metrics: Record<string, number>;
  recordedAt: Date;
}

/** The bounds the parity check holds every step to: mean and p99 |Δ| in nats, in float32 (issue 22). */
export const PARITY_BOUNDS = { meanAbs: 0.02, p99Abs: 0.1 } as const;

export class InvalidTrainingStep extends Error {
  override readonly name = 'InvalidTrainingStep';
}

/** Checks what Postgres cannot see: JSON has no NaN or Infinity, so a non-finite metric must be refused here. */
export function validateTrainingStep(runId: string, step: number, policyVersion: number, metrics: Record<string, number>): void {
  const where = `training step ${step} of run ${runId}`;
  if (!Number.isInteger(step) || step < 0) throw new InvalidTrainingStep(`${where}: the step must be a non-negative integer, got ${step}`);
  if (!Number.isInteger(policyVersion) || policyVersion < 0) {
    throw new InvalidTrainingStep(`${where}: the policy version must be a non-negative integer, got ${policyVersion}`);
  }
  for (const [name, value] of Object.entries(metrics)) {
    if (typeof value !== 'number' || !Number.isFinite(value))
      throw new InvalidTrainingStep(`${where}: metric ${name} is ${String(value)}, not a finite number`);
  }
}
