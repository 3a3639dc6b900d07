import type { TrajectoryResult } from '../workflows/trajectory-state.js';
import type { FailureClass } from '../trajectory/failure.js';

/** What a finished run prints: outcome counts, per-turn success, mean return, token and time totals. */
export interface RunSummary {
  trajectories: number;
  completed: number;
  failed: number;
  /** Failed trajectories by failure type, most frequent first; "unknown" where a result names none. */
  failuresByType: Record<string, number>;
  /** Failed trajectories by class: infrastructure (a rerun may succeed) or data. */
  failuresByClass: Record<FailureClass, number>;
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
    ...failureCounts(results.filter((result) => result.status === 'failed')),
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
    ...(summary.failed > 0 ? [`failures          ${formatFailures(summary)}`] : []),
    `success by turn   ${summary.successRateByTurn.map((rate, t) => `t${t + 1} ${percent(rate)}`).join('  ') || 'n/a'}`,
    `mean return       ${summary.meanReturn.toFixed(3)}`,
    `output tokens     ${summary.outputTokens}`,
    `wall time         ${summary.wallSeconds.toFixed(1)} s (${summary.trajectoriesPerSecond.toFixed(2)} trajectories/s)`,
  ].join('\n');
}

function failureCounts(failed: readonly TrajectoryResult[]): Pick<RunSummary, 'failuresByType' | 'failuresByClass'> {
  const byType = new Map<string, number>();
  const failuresByClass: Record<FailureClass, number> = { infrastructure: 0, data: 0 };
  for (const result of failed) {
    byType.set(result.failureType ?? 'unknown', (byType.get(result.failureType ?? 'unknown') ?? 0) + 1);
    // A failure that names no class is not the data's fault: it must never read as a verdict on the answer.
    failuresByClass[result.failureClass ?? 'infrastructure'] += 1;
  }
  return { failuresByType: Object.fromEntries([...byType].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))), failuresByClass };
}

/** e.g. "PolicyUnavailable 3, ContextExhausted 1 (infrastructure 3, data 1)". */
function formatFailures(summary: RunSummary): string {
  const types = Object.entries(summary.failuresByType)
    .map(([type, n]) => `${type} ${n}`)
    .join(', ');
  return `${types} (infrastructure ${summary.failuresByClass.infrastructure}, data ${summary.failuresByClass.data})`;
}
