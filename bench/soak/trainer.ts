import type { RolloutClient } from '../../src/client/rollout-client.js';
import { publishPolicyVersion } from '../../src/store/write/policy-versions.js';

/** One acknowledged batch: when the trainer had it, and what was in it. */
export interface Step {
  atMs: number;
  groups: number;
  trajectories: number;
}

export interface TrainingRecord {
  steps: Step[];
  /** How many times each trajectory / group was handed out in an acknowledged batch (1 each, when all is well). */
  consumedTrajectories: Map<string, number>;
  consumedGroups: Map<string, number>;
  /** Groups that finished with every member failed: never handed out, but done. */
  rejectedGroups: number;
  policyVersion: number;
  startedMs: number;
  /** Set when nothing was consumed for `stallMs`: the run gave up. */
  stalled: boolean;
}

/**
 * The trainer's loop: claim a batch, "train" (nothing), acknowledge it, publish the next policy version, until
 * every group is consumed or finished with no usable trajectory. A batch may be partial after a 5 s wait,
 * which only happens at the tail of the run or while the workers are being restarted.
 */
export async function train(
  client: RolloutClient,
  runId: string,
  totalGroups: number,
  batchSize: number,
  stallMs: number,
  afterStep: (record: TrainingRecord) => Promise<void>,
): Promise<TrainingRecord> {
  const record: TrainingRecord = {
    steps: [],
    consumedTrajectories: new Map(),
    consumedGroups: new Map(),
    rejectedGroups: 0,
    policyVersion: 0,
    startedMs: performance.now(),
    stalled: false,
  };
  let lastStepMs = record.startedMs;
  while (record.consumedGroups.size + record.rejectedGroups < totalGroups) {
    const batch = await client.consume(runId, batchSize, { waitMs: 5_000, partial: true, leaseMs: 300_000 });
    if (!batch) {
      record.rejectedGroups = (await client.status(runId))?.rejected ?? 0;
      if (performance.now() - lastStepMs > stallMs) {
        record.stalled = true;
        break;
      }
      continue;
    }
    await client.ack(batch.batchId);
    record.policyVersion += 1;
    await publishPolicyVersion(client.pool, record.policyVersion);
    lastStepMs = performance.now();
    record.steps.push({ atMs: lastStepMs, groups: batch.groupIds.length, trajectories: batch.rows.length });
    for (const id of batch.groupIds) record.consumedGroups.set(id, (record.consumedGroups.get(id) ?? 0) + 1);
    for (const row of batch.rows) record.consumedTrajectories.set(row.trajectory_id, (record.consumedTrajectories.get(row.trajectory_id) ?? 0) + 1);
    await afterStep(record);
  }
  return record;
}

/**
 * Trajectories per second consumed in the first and last quarter of the training loop (its start to its last
 * batch). The first quarter includes the groups that finished while everything was being submitted.
 */
export function quarterThroughput(record: TrainingRecord): { firstQuarter: number; lastQuarter: number; overall: number; loopSeconds: number } {
  const end = record.steps.at(-1)?.atMs ?? record.startedMs;
  const quarterMs = (end - record.startedMs) / 4;
  const rate = (from: number, to: number) => {
    const trajectories = record.steps.filter((s) => s.atMs > from && s.atMs <= to).reduce((sum, s) => sum + s.trajectories, 0);
    return quarterMs > 0 ? +(trajectories / (quarterMs / 1000)).toFixed(2) : 0;
  };
  const total = record.steps.reduce((sum, s) => sum + s.trajectories, 0);
  const loopSeconds = (end - record.startedMs) / 1000;
  return {
    firstQuarter: rate(record.startedMs - 1, record.startedMs + quarterMs),
    lastQuarter: rate(end - quarterMs, end),
    overall: loopSeconds > 0 ? +(total / loopSeconds).toFixed(2) : 0,
    loopSeconds: +loopSeconds.toFixed(1),
  };
}
