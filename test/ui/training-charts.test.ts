import { describe, expect, it } from 'vitest';
import type { TrainingStep } from '../../src/training/training-step.js';
import type { VersionRewards } from '../../src/store/read/version-rewards.js';
import { trainingCharts, type ChartSpec, type RunTraining } from '../../src/ui/training-charts.js';

const step = (n: number, metrics: Record<string, number>): TrainingStep => ({
  runId: 'r',
  step: n,
  policyVersion: n + 1,
  metrics,
  recordedAt: new Date(0),
});
const version = (v: number, meanReturn: number, turnRates: number[]): VersionRewards => ({
  version: v,
  trajectories: 4,
  meanReward: meanReturn / 2,
  meanReturn,
  anySuccess: 0.5,
  meanSpan: 0,
  maxSpan: 0,
  straddling: 0,
  meanOutputTokens: 100,
  truncatedShare: 0,
  contextExhausted: 0,
  byTurn: turnRates.map((successRate, turn) => ({ turn, trajectories: 4, successRate, meanReward: 2 * successRate - 1, truncatedShare: 0 })),
});
const chart = (training: RunTraining, id: string): ChartSpec => trainingCharts(training).find((c) => c.id === id)!;
const series = (spec: ChartSpec) => Object.fromEntries(spec.series.map((label, i) => [label, spec.y[i]]));

describe("the run page's training charts", () => {
  const training: RunTraining = {
    eta: 2,
    byVersion: [version(0, -0.5, [0.25, 0.5]), version(3, 0.5, [0.75])],
    steps: [
      step(0, { parity_mean_abs: 0.01, parity_p99_abs: 0.05, version_lag_mean: 0.5, version_lag_max: 1 }),
      step(1, { parity_mean_abs: 0.03, version_lag_mean: 1, version_lag_max: 3, eta: 4 }),
    ],
  };

  it('draws parity per step against its bounds, 0.02 for the mean and 0.1 for p99, as flat dashed lines', () => {
    const parity = chart(training, 'chart-step-parity');
    expect(parity.x).toEqual([0, 1]);
    // A step that did not report a figure leaves a gap, not a zero.
    expect(series(parity)).toEqual({
      'mean |Δ|': [0.01, 0.03],
      'p99 |Δ|': [0.05, null],
      'mean bound 0.02': [0.02, 0.02],
      'p99 bound 0.1': [0.1, 0.1],
    });
    expect(parity.styles.map((s) => s.dash !== undefined)).toEqual([false, false, true, true]);
    expect(parity.yFromZero).toBe(true);
  });

  it("draws the version lag of consumed tokens against η: the step's own η where it reported one, else the run's", () => {
    expect(series(chart(training, 'chart-step-lag'))).toEqual({ 'mean lag': [0.5, 1], 'max lag': [1, 3], η: [2, 4] });
  });

  it('draws reward by the generating version, and success by turn per version with gaps where no trajectory reached the turn', () => {
    const reward = chart(training, 'chart-reward-by-version');
    expect([reward.x, reward.y]).toEqual([
      [0, 3],
      [
        [-0.25, 0.25],
        [-0.5, 0.5],
      ],
    ]);
    expect(series(chart(training, 'chart-turns-by-version'))).toEqual({ 'turn 1': [0.25, 0.75], 'turn 2': [0.5, null] });
  });

  it('says what is missing instead of drawing empty axes', () => {
    const empty = trainingCharts({ eta: null, byVersion: [], steps: [] });
    expect(empty.map((c) => [c.id, c.empty])).toEqual([
      ['chart-reward-by-version', 'no completed trajectories yet'],
      ['chart-turns-by-version', 'no completed trajectories yet'],
      ['chart-step-reward', 'no training steps recorded yet'],
      ['chart-step-rollouts', 'no training steps recorded yet'],
      ['chart-step-loss', 'no training steps recorded yet'],
      ['chart-step-parity', 'no training steps recorded yet'],
      ['chart-step-lag', 'no training steps recorded yet'],
    ]);
    // Steps that never reported parity: the other charts draw, parity says so.
    const noParity = trainingCharts({ eta: 1, byVersion: [], steps: [step(0, { loss: 1, mean_reward: 0 })] });
    expect(noParity.filter((c) => c.empty?.startsWith('no ')).map((c) => [c.id, c.empty])).toEqual([
      ['chart-reward-by-version', 'no completed trajectories yet'],
      ['chart-turns-by-version', 'no completed trajectories yet'],
      ['chart-step-rollouts', 'no rollouts of a version a step published yet'],
      ['chart-step-parity', 'no step reported mean |Δ| or p99 |Δ|'],
      ['chart-step-lag', 'no step reported mean lag or max lag'],
    ]);
  });
});
