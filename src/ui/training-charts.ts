import type { VersionRewards } from '../store/read/version-rewards.js';
import { PARITY_BOUNDS, type TrainingStep } from '../training/training-step.js';

/** What the run page shows of training: rewards by the generating policy version, and the trainer's steps. */
export interface RunTraining {
  /** The run's staleness bound η (max_head_offpolicyness, in versions); null for a plain `ratchet run`. */
  eta: number | null;
  byVersion: VersionRewards[];
  steps: TrainingStep[];
}

/** One uPlot chart as the client script draws it (`RatchetUI.chart`): x values and one array per series. */
export interface ChartSpec {
  id: string;
  title: string;
  xLabel: string;
  yLabel: string;
  /** Whole-number x (versions, steps): ticks on integers only. */
  discrete?: boolean;
  yRange?: [number, number];
  /** Magnitudes (|Δ|, lag): the y axis starts at 0 so a value reads against its bound from zero. */
  yFromZero?: boolean;
  /** x are seconds since the epoch. */
  time?: boolean;
  /** A histogram: x are bar centres, barWidth apart at most, and the x range is padded by half a bar each side. */
  bars?: boolean;
  barWidth?: number;
  x: number[];
  series: string[];
  y: (number | null)[][];
  /** Per series and point, the samples the point rests on (trajectories, turns or groups); null for a reference line. */
  counts?: (number[] | null)[];
  /** A point resting on fewer samples than this is ringed, and its legend value says so. */
  fewBelow?: number;
  /** Per series; a dashed series is a reference line (a bound, η) or the compared run; `bars` draws it as bars. */
  styles: ChartStyle[];
  /** Shown instead of the chart when there is nothing to draw. */
  empty?: string;
}

/** `band: 'wilson'`: a rate drawn with its Wilson 95% interval shaded around it, from the samples each point rests on. */
export interface ChartStyle {
  colour: string;
  dash?: number[];
  bars?: boolean;
  band?: 'wilson';
}

/** Fewer samples than this and a mean or a rate is noise: the point is ringed. */
export const FEW_SAMPLES = 10;

export const MEASURED = ['#1d5fbf', '#c0392b', '#1f8a4c', '#b9770e', '#7d3c98', '#17808a'];
const REFERENCE = { colour: '#6b7486', dash: [6, 4] };

/** The charts of the run page's training section, built from the numbers the JSON API also returns. */
export function trainingCharts({ eta, byVersion, steps }: RunTraining): ChartSpec[] {
  const versions = byVersion.map((v) => v.version);
  const turns = Math.max(0, ...byVersion.map((v) => v.byTurn.length));
  const stepX = steps.map((s) => s.step);
  const metric = (name: string) => steps.map((s) => s.metrics[name] ?? null);
  const noSteps = 'no training steps recorded yet';
  const noVersions = 'no completed trajectories yet';
  return [
    {
      id: 'chart-reward-by-version',
      title: 'reward by policy version',
      xLabel: 'policy version of the first generated token',
      yLabel: 'reward',
      discrete: true,
      x: versions,
      series: ['mean reward per turn r̄', 'mean return R₀'],
      y: [byVersion.map((v) => v.meanReward), byVersion.map((v) => v.meanReturn)],
      counts: [byVersion.map((v) => v.trajectories), byVersion.map((v) => v.trajectories)],
      fewBelow: FEW_SAMPLES,
      styles: [{ colour: MEASURED[0]! }, { colour: MEASURED[2]! }],
      ...(versions.length === 0 ? { empty: noVersions } : {}),
    },
    {
      id: 'chart-turns-by-version',
      title: 'success by turn and policy version',
      xLabel: 'policy version of the first generated token',
      yLabel: 'success rate',
      discrete: true,
      yRange: [0, 1],
      x: versions,
      series: Array.from({ length: turns }, (_, t) => `turn ${t + 1}`),
      // Null where no trajectory of that version reached the turn (early stop, or fewer turns).
      y: Array.from({ length: turns }, (_, t) => byVersion.map((v) => v.byTurn.find((b) => b.turn === t)?.successRate ?? null)),
      counts: Array.from({ length: turns }, (_, t) => byVersion.map((v) => v.byTurn.find((b) => b.turn === t)?.trajectories ?? 0)),
      fewBelow: FEW_SAMPLES,
      styles: Array.from({ length: turns }, (_, t) => ({ colour: MEASURED[t % MEASURED.length]! })),
      ...(versions.length === 0 ? { empty: noVersions } : {}),
    },
    stepChart('chart-step-reward', 'mean reward per step', 'reward', stepX, [['mean reward', metric('mean_reward')]], [], noSteps),
    rolloutsByStep(steps, byVersion, noSteps),
    stepChart('chart-step-loss', 'loss per step', 'loss', stepX, [['loss', metric('loss')]], [], noSteps),
    stepChart(
      'chart-step-parity',
      'logprob parity per step',
      '|Δ logprob| (nats)',
      stepX,
      [
        ['mean |Δ|', metric('parity_mean_abs')],
        ['p99 |Δ|', metric('parity_p99_abs')],
      ],
      // Each bound dashed in its measurement's colour.
      [
        { label: `mean bound ${PARITY_BOUNDS.meanAbs}`, value: PARITY_BOUNDS.meanAbs, colour: MEASURED[0] },
        { label: `p99 bound ${PARITY_BOUNDS.p99Abs}`, value: PARITY_BOUNDS.p99Abs, colour: MEASURED[1] },
      ],
      noSteps,
    ),
    // η as the trainer reported it at each step, else the run's own: the lag of consumed tokens should stay under it.
    stepChart(
      'chart-step-lag',
      'version lag of consumed tokens',
      'versions behind',
      stepX,
      [
        ['mean lag', metric('version_lag_mean')],
        ['max lag', metric('version_lag_max')],
      ],
      [{ label: 'η', value: steps.map((s) => s.metrics.eta ?? eta) }],
      noSteps,
    ),
  ];
}

type Line = [label: string, values: (number | null)[]];
/** A horizontal line (one value) or one that may move per step (η as reported). */
interface Reference {
  label: string;
  value: number | (number | null)[];
  colour?: string | undefined;
}

function stepChart(id: string, title: string, yLabel: string, x: number[], measured: Line[], references: Reference[], noSteps: string): ChartSpec {
  const reported = measured.some(([, values]) => values.some((v) => v !== null));
  const lines: Line[] = [...measured, ...references.map(({ label, value }): Line => [label, Array.isArray(value) ? value : x.map(() => value)])];
  return {
    id,
    title,
    xLabel: 'training step',
    yLabel,
    x,
    discrete: true,
    yFromZero: references.length > 0,
    series: lines.map(([label]) => label),
    y: lines.map(([, values]) => values),
    styles: [
      ...measured.map((_, i) => ({ colour: MEASURED[i]! })),
      ...references.map((r) => ({ ...REFERENCE, colour: r.colour ?? REFERENCE.colour })),
    ],
    ...(x.length === 0 ? { empty: noSteps } : reported ? {} : { empty: `no step reported ${measured.map(([label]) => label).join(' or ')}` }),
  };
}

/**
 * Reward and return by training step: the rollouts generated by the policy each step published (its policy version
 * is the version of their first generated token), so the curve shows what the step did to the policy's rollouts.
 */
function rolloutsByStep(steps: readonly TrainingStep[], byVersion: readonly VersionRewards[], noSteps: string): ChartSpec {
  const rollouts = steps.map((s) => byVersion.find((v) => v.version === s.policyVersion));
  const samples = rollouts.map((v) => v?.trajectories ?? 0);
  return {
    id: 'chart-step-rollouts',
    title: 'rollouts of the policy each step published',
    xLabel: 'training step',
    yLabel: 'reward',
    discrete: true,
    x: steps.map((s) => s.step),
    series: ['mean reward per turn r̄', 'mean return R₀'],
    y: [rollouts.map((v) => v?.meanReward ?? null), rollouts.map((v) => v?.meanReturn ?? null)],
    counts: [samples, samples],
    fewBelow: FEW_SAMPLES,
    styles: [{ colour: MEASURED[0]! }, { colour: MEASURED[2]! }],
    ...(steps.length === 0 ? { empty: noSteps } : rollouts.some(Boolean) ? {} : { empty: 'no rollouts of a version a step published yet' }),
  };
}
