import type { RunCurves } from '../store/read/run-curves.js';
import { LATENCY_PHASES, LATENCY_SAMPLE, TURN_LATENCY, type LatencyPhase } from '../store/read/turn-latency.js';
import type { VersionRewards } from '../store/read/version-rewards.js';
import { FEW_SAMPLES, MEASURED, type ChartSpec } from './training-charts.js';

/**
 * The run page's curves as charts, built from the numbers the JSON API also returns: is the run learning (success and
 * reward over time, by turn and by version), is there signal to learn from (groups with one reward, advantages), and
 * is generation healthy (output length, truncation, staleness at hand-out).
 */
export function curveCharts(curves: RunCurves, byVersion: readonly VersionRewards[], eta: number | null = null): ChartSpec[] {
  const time = curves.overTime;
  const seconds = time.map((p) => p.time / 1000);
  const samples = time.map((p) => p.samples);
  const groupSamples = time.map((p) => p.groups);
  const turns = [...new Set(curves.byTurnVersion.map((p) => p.turn))].sort((a, b) => a - b);
  const versions = [...new Set(curves.byTurnVersion.map((p) => p.version))].sort((a, b) => a - b);
  const at = (version: number, turn: number) => curves.byTurnVersion.find((p) => p.version === version && p.turn === turn);
  const none = 'no completed trajectories yet';
  const noGroups = 'no finished groups (a plain run has none)';
  const line = (i: number) => ({ colour: MEASURED[i % MEASURED.length]! });
  return [
    chart(
      {
        id: 'chart-by-turn',
        title: 'success rate by turn',
        xLabel: 'turn',
        yLabel: 'success',
        discrete: true,
        yRange: [0, 1],
        x: curves.byTurn.map((p) => p.turn + 1),
        series: ['success'],
        y: [curves.byTurn.map((p) => p.successRate)],
        counts: [curves.byTurn.map((p) => p.samples)],
        wilson: true,
      },
      none,
    ),
    chart(
      {
        id: 'chart-over-time',
        title: 'success over time',
        xLabel: '',
        yLabel: 'success',
        time: true,
        yRange: [0, 1],
        x: seconds,
        series: ['first turn', 'any turn'],
        y: [time.map((p) => p.firstTurnSuccess), time.map((p) => p.anySuccess)],
        counts: [samples, samples],
        wilson: true,
      },
      none,
    ),
    chart(
      {
        id: 'chart-reward-over-time',
        title: 'reward and return over time',
        xLabel: '',
        yLabel: 'reward',
        time: true,
        x: seconds,
        series: ['mean reward per turn r̄', 'mean return R₀'],
        y: [time.map((p) => p.meanReward), time.map((p) => p.meanReturn)],
        counts: [samples, samples],
      },
      none,
    ),
    chart(
      {
        id: 'chart-by-version',
        title: 'success per turn by policy version',
        xLabel: 'policy version of the turn’s last token',
        yLabel: 'success',
        discrete: true,
        yRange: [0, 1],
        x: versions,
        series: turns.map((t) => `turn ${t + 1}`),
        // Null where no turn of that index ended under that version.
        y: turns.map((t) => versions.map((v) => at(v, t)?.successRate ?? null)),
        counts: turns.map((t) => versions.map((v) => at(v, t)?.samples ?? 0)),
        styles: turns.map((_, i) => line(i)),
        wilson: true,
      },
      none,
    ),
    histogram(
      'chart-lengths',
      'output length per turn',
      'tokens',
      'turns',
      curves.outputLengths.map((b) => [b.from, b.to, b.turns]),
      none,
    ),
    // Throughput from the same buckets: what was stored in each, over its width (the newest bucket may still be filling).
    chart(
      {
        id: 'chart-throughput-over-time',
        title: 'throughput: output tokens per second',
        xLabel: '',
        yLabel: 'tokens / s',
        time: true,
        yFromZero: true,
        x: seconds,
        series: ['output tokens / s of stored trajectories'],
        counts: [samples],
        y: [time.map((p) => (curves.bucketSeconds && p.meanOutputTokens !== null ? (p.meanOutputTokens * p.samples) / curves.bucketSeconds : null))],
      },
      none,
    ),
    chart(
      {
        id: 'chart-trajectories-over-time',
        title: 'throughput: trajectories stored per minute',
        xLabel: '',
        yLabel: 'trajectories / min',
        time: true,
        yFromZero: true,
        x: seconds,
        series: ['completed trajectories / min'],
        counts: [samples],
        y: [time.map((p) => (curves.bucketSeconds ? (p.samples * 60) / curves.bucketSeconds : null))],
      },
      none,
    ),
    ...LATENCY_PHASES.map((phase) => latencyChart(phase, curves, seconds)),
    chart(
      {
        id: 'chart-length-over-time',
        title: 'output length over time',
        xLabel: '',
        yLabel: 'tokens per trajectory',
        time: true,
        yFromZero: true,
        x: seconds,
        series: ['mean output tokens'],
        y: [time.map((p) => p.meanOutputTokens)],
        counts: [samples],
      },
      none,
    ),
    chart(
      {
        id: 'chart-truncation-over-time',
        title: 'turns cut by the length limit',
        xLabel: '',
        yLabel: 'share of turns',
        time: true,
        yRange: [0, 1],
        x: seconds,
        series: ['truncated (no EOS)'],
        y: [time.map((p) => p.truncatedShare)],
        counts: [samples],
      },
      none,
    ),
    chart(
      {
        id: 'chart-length-by-version',
        title: 'output length by policy version',
        xLabel: 'policy version of the first generated token',
        yLabel: 'tokens per trajectory',
        discrete: true,
        yFromZero: true,
        x: byVersion.map((v) => v.version),
        series: ['mean output tokens'],
        y: [byVersion.map((v) => v.meanOutputTokens)],
        counts: [byVersion.map((v) => v.trajectories)],
      },
      none,
    ),
    chart(
      {
        id: 'chart-truncation-by-version',
        title: 'turns cut by the length limit, by policy version',
        xLabel: 'policy version of the first generated token',
        yLabel: 'share of turns',
        discrete: true,
        yRange: [0, 1],
        x: byVersion.map((v) => v.version),
        series: ['truncated (no EOS)'],
        y: [byVersion.map((v) => v.truncatedShare)],
        counts: [byVersion.map((v) => v.trajectories)],
      },
      none,
    ),
    chart(
      {
        id: 'chart-no-signal-over-time',
        title: 'groups with no training signal',
        xLabel: '',
        yLabel: 'share of groups',
        time: true,
        yRange: [0, 1],
        x: seconds,
        series: ['every sample the same R₀'],
        y: [time.map((p) => p.noSignalShare)],
        counts: [groupSamples],
        wilson: true,
      },
      time.some((p) => p.groups > 0) ? '' : noGroups,
    ),
    chart(
      {
        id: 'chart-no-signal-by-version',
        title: 'groups with no training signal, by policy version',
        xLabel: 'oldest first-token version in the group',
        yLabel: 'share of groups',
        discrete: true,
        yRange: [0, 1],
        x: curves.groupsByVersion.map((g) => g.version),
        series: ['every sample the same R₀'],
        y: [curves.groupsByVersion.map((g) => g.noSignalShare)],
        counts: [curves.groupsByVersion.map((g) => g.groups)],
        wilson: true,
      },
      noGroups,
    ),
    histogram(
      'chart-advantages',
      'group-relative advantage R₀ − group mean (not / std)',
      'advantage',
      'samples',
      curves.advantages.map((b) => [b.from, b.to, b.samples]),
      noGroups,
    ),
    stalenessHistogram(curves.staleness, eta),
  ];
}

/** The chart ids of the latency over time, one per phase. */
export const LATENCY_CHARTS = LATENCY_PHASES.map((phase) => `chart-${phase}-latency-over-time`);

/**
 * One latency over the throughput charts' time buckets: p50 and p95 of the bucket's timed turns (TURN_LATENCY, the
 * definition in the title). A bucket whose turns were stored without timings (before migration 018) is a gap, not 0.
 */
function latencyChart(phase: LatencyPhase, curves: RunCurves, seconds: number[]): ChartSpec {
  const time = curves.overTime;
  const turns = time.map((p) => p.latency[phase].turns);
  const inSeconds = (ms: number | null) => (ms === null ? null : ms / 1000);
  return chart(
    {
      id: `chart-${phase}-latency-over-time`,
      title: `latency, ${TURN_LATENCY[phase]} · ${LATENCY_SAMPLE}`,
      xLabel: '',
      yLabel: 'seconds',
      time: true,
      yFromZero: true,
      x: seconds,
      series: [`${phase} p50`, `${phase} p95`],
      y: [time.map((p) => inSeconds(p.latency[phase].p50)), time.map((p) => inSeconds(p.latency[phase].p95))],
      counts: [turns, turns],
    },
    time.length === 0
      ? 'no completed trajectories yet'
      : 'no timed turns yet: turns stored before migration 018 (or by an older worker) keep no timings',
  );
}

/**
 * Members by staleness at their latest hand-out, the bars over the bound η in their own colour: their sum is the run's
 * "stale at hand-out" count and what the list's stale filter finds (one definition, named in the title).
 */
function stalenessHistogram(bins: RunCurves['staleness'], eta: number | null): ChartSpec {
  const stale = (staleness: number) => eta !== null && staleness > eta;
  const named = eta !== null && bins.length > 0;
  const spec = histogram(
    'chart-staleness',
    named ? `staleness at hand-out (stale: over η = ${eta}, ${sum(bins.filter((b) => stale(b.staleness)))} trajectories)` : 'staleness at hand-out',
    'versions behind the consumer’s',
    'trajectories',
    bins.map((b) => [b.staleness - 0.5, b.staleness + 0.5, b.members]),
    'no batch handed out yet',
    true,
  );
  if (!named) return spec;
  return {
    ...spec,
    series: [`within η = ${eta}`, 'stale (over η)'],
    counts: [null, null],
    y: [bins.map((b) => (stale(b.staleness) ? null : b.members)), bins.map((b) => (stale(b.staleness) ? b.members : null))],
    styles: [
      { colour: MEASURED[0]!, bars: true },
      { colour: MEASURED[1]!, bars: true },
    ],
  };
}

const sum = (bins: RunCurves['staleness']) => bins.reduce((total, b) => total + b.members, 0);

/** `wilson`: every series is a rate of its counts (successes of trajectories, groups of groups): shaded with its interval. */
type Draft = Omit<ChartSpec, 'styles' | 'fewBelow'> & { styles?: ChartSpec['styles']; wilson?: boolean };

/** Named in the title of every chart that shades it. */
export const BAND_NOTE = 'shaded: Wilson 95% interval';

/** A chart, or what is missing instead of it: `empty` also when no point has a value (no phantom axes). */
function chart(draft: Draft, empty: string): ChartSpec {
  const drawn = draft.x.length > 0 && draft.y.some((values) => values.some((v) => v !== null));
  const { wilson, ...spec } = draft;
  const styles = (draft.styles ?? draft.series.map((_, i) => ({ colour: MEASURED[i]! }))).map((style) =>
    wilson ? { ...style, band: 'wilson' as const } : style,
  );
  return {
    ...spec,
    title: wilson && drawn ? `${draft.title} · ${BAND_NOTE}` : draft.title,
    styles,
    fewBelow: FEW_SAMPLES,
    ...(drawn ? {} : { empty: empty || 'nothing to draw yet' }),
  };
}

function histogram(
  id: string,
  title: string,
  xLabel: string,
  yLabel: string,
  bins: [from: number, to: number, n: number][],
  empty: string,
  discrete = false,
): ChartSpec {
  const width = Math.min(...bins.map(([from, to]) => to - from));
  return chart(
    {
      id,
      title,
      xLabel,
      yLabel,
      bars: true,
      barWidth: Number.isFinite(width) ? width : 1,
      discrete,
      yFromZero: true,
      x: bins.map(([from, to]) => (from + to) / 2),
      series: [yLabel],
      y: [bins.map(([, , n]) => n)],
      counts: [null],
      styles: [{ colour: MEASURED[0]!, bars: true }],
    },
    bins.length === 0 ? empty : '',
  );
}
