import type pg from 'pg';
import { InvalidTrainingStep, validateTrainingStep, type TrainingStep } from '../../training/training-step.js';
import { UnknownRun } from './batches.js';

/**
 * Records one trainer step (migration 009's `ratchet_record_training_step`, which the Python package calls too).
 * Recording a step again replaces it: a trainer that died mid-step redoes the step and reports it once more.
 */
export async function recordTrainingStep(
  pool: pg.Pool,
  runId: string,
  step: number,
  policyVersion: number,
  metrics: Record<string, number>,
): Promise<void> {
  validateTrainingStep(runId, step, policyVersion, metrics);
  try {
    await pool.query('SELECT ratchet_record_training_step($1, $2, $3, $4)', [runId, step, policyVersion, JSON.stringify(metrics)]);
  } catch (error) {
    const { code, message } = error as { code?: string; message: string };
    if (code === 'RV002') throw new UnknownRun(message, { cause: error });
    if (code === 'RV006') throw new InvalidTrainingStep(message, { cause: error });
    throw error;
  }
}

/** Every recorded step of a run, in step order. */
export async function trainingSteps(pool: pg.Pool, runId: string): Promise<TrainingStep[]> {
  const { rows } = await pool.query<{ step: number; policy_version: number; metrics: Record<string, number>; recorded_at: Date }>(
    'SELECT step, policy_version, metrics, recorded_at FROM training_steps WHERE run_id = $1 ORDER BY step',
    [runId],
  );
  return rows.map((row) => ({ runId, step: row.step, policyVersion: row.policy_version, metrics: row.metrics, recordedAt: row.recorded_at }));
}
