import type { TrajectoryResult } from '../workflows/trajectory-state.js';

/** What a finished run prints: outcome counts, per-turn success, mean return, token and time totals. */
export interface RunSummary {
  trajectories: number;
  completed: number;
  failed: number;
  /** Fraction correct among completed trajectories that reached turn t. */
  successRateByTurn: number[];
  /** Mean of R_0, the return of the whole trajectory. */
  meanReturn: number;
  outputTokens: number;
  wallSeconds: number;
  trajectoriesPerSecond: number;
}

export function summarise(results: readonly TrajectoryResult[], wallSeconds: number): RunSummary {
  const completed = results.filter((result) => result.status === 'completed');
  const maxTurns = Math.max(0, ...completed.map((result) => result.turns.length));
  const successRateByTurn = Array.from({ length: maxTurns }, (_, t) => {
    const reached = completed.filter((result) => result.turns.length > t);
    return reached.filter((result) => result.turns[t]!.success).length / reached.length;
  });
  return {
    trajectories: results.length,
    completed: completed.length,
    failed: results.length - completed.length,
    successRateByTurn,
    meanReturn: completed.length === 0 ? 0 : completed.reduce((sum, result) => sum + (result.rewards[0] ?? 0), 0) / completed.length,
    outputTokens: results.reduce((sum, result) => sum + result.outputTokens, 0),
    wallSeconds,
    trajectoriesPerSecond: wallSeconds > 0 ? results.length / wallSeconds : 0,
  };
}

export function formatSummary(summary: RunSummary): string {
  const percent = (x: number) => `${(100 * x).toFixed(1)}%`;
  return [
    `trajectories      ${summary.trajectories} (${summary.completed} completed, ${summary.failed} failed)`,
    `success by turn   ${summary.successRateByTurn.map((rate, t) => `t${t + 1} ${percent(rate)}`).join('  ') || 'n/a'}`,
    `mean return       ${summary.meanReturn.toFixed(3)}`,
    `output tokens     ${summary.outputTokens}`,
    `wall time         ${summary.wallSeconds.toFixed(1)} s (${summary.trajectoriesPerSecond.toFixed(2)} trajectories/s)`,
  ].join('\n');
}
