/** A run's admission settings: AReaL's staleness control, counted in groups (the samples of one prompt). */
export interface StalenessBound {
  /** η: how many policy versions a group may be behind the trainer when it is consumed. 0 is synchronous RL. */
  maxHeadOffpolicyness: number;
  /** Groups per training step: the trainer consumes this many per policy version. */
  batchSize: number;
  /** Most groups generating at once. */
  maxConcurrent: number;
}

export interface AdmissionCounters {
  /** The latest published policy version (0 before the first publish). */
  version: number;
  /** Groups admitted and not yet finished. */
  running: number;
  /** Groups finished with at least one completed trajectory (cumulative; consumption does not lower it). */
  accepted: number;
}

/**
 * How many more groups may start now (AReaL's StalenessManager.get_capacity):
 * min(maxConcurrent − running, (η + version + 1) · batchSize − (accepted + running)), never below 0.
 */
export function admissionCapacity(bound: StalenessBound, counters: AdmissionCounters): number {
  const concurrency = bound.maxConcurrent - counters.running;
  const staleness = (bound.maxHeadOffpolicyness + counters.version + 1) * bound.batchSize - (counters.accepted + counters.running);
  return Math.max(0, Math.min(concurrency, staleness));
}

/** Versions between a trajectory's oldest token and the policy it is handed to. */
export function stalenessAt(handOutVersion: number, oldestTokenVersion: number): number {
  return Math.max(0, handOutVersion - oldestTokenVersion);
}

/** A trajectory is stale when it is older than the run's bound allows; it is still handed out, flagged. */
export function isStale(bound: Pick<StalenessBound, 'maxHeadOffpolicyness'>, staleness: number): boolean {
  return staleness > bound.maxHeadOffpolicyness;
}
