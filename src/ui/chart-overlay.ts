import { MEASURED, type ChartSpec, type ChartStyle } from './training-charts.js';

/** One colour per run, the shown run's first: each run's lines in its own colour, whatever the measurement. */
export const RUN_COLOURS = MEASURED;
/** Within a run, its measurements told apart by dash: solid, dashed, dotted, dash-dot. */
const SERIES_DASH: readonly (number[] | undefined)[] = [undefined, [6, 3], [2, 3], [10, 3, 2, 3]];
/** Runs compared with the shown one at most (`?compare=a,b,c`): more lines than this on one chart are unreadable. */
export const MAX_COMPARED = RUN_COLOURS.length - 1;

/** The colour of the i-th run of a comparison (0: the shown run). */
export function runColour(i: number): string {
  return RUN_COLOURS[i % RUN_COLOURS.length]!;
}

/**
 * Several runs' charts on the same axes (`/runs/<a>?compare=<b>,<c>`): x values are merged, each run's lines drawn in
 * its own colour (runColour) and each measurement of a run in its own dash, labelled with the run's name. Runs started
 * at different times are overlaid by time since each run's first point. The compared runs' reference lines (bounds, η)
 * are left out: the shown run's are drawn once; its histogram bars keep their colours and the compared runs' histograms
 * are drawn as lines over them. The shown run's rates keep their Wilson band; the compared runs' have none (one band per
 * chart stays readable).
 */
export function overlayCharts(
  shown: readonly ChartSpec[],
  compared: readonly { runId: string; charts: readonly ChartSpec[] }[],
  shownRun: string,
): ChartSpec[] {
  if (compared.length === 0) return [...shown];
  return shown.map((spec) => {
    const others = compared.flatMap(({ runId, charts }) => {
      const other = charts.find((c) => c.id === spec.id);
      return other ? [{ runId, spec: other }] : [];
    });
    if (others.length === 0 || (spec.empty && others.every((o) => o.spec.empty))) return spec;
    return overlay(
      elapsed(spec),
      shownRun,
      others.map((o) => ({ runId: o.runId, spec: elapsed(o.spec) })),
      compared.map((c) => c.runId),
    );
  });
}

function overlay(a: ChartSpec, nameA: string, others: { runId: string; spec: ChartSpec }[], order: readonly string[]): ChartSpec {
  const x = [...new Set([a, ...others.map((o) => o.spec)].flatMap((spec) => (spec.empty ? [] : spec.x)))].sort((p, q) => p - q);
  const align = (spec: ChartSpec, values: readonly (number | null)[]) => {
    const byX = new Map(spec.empty ? [] : spec.x.map((v, i) => [v, values[i] ?? null]));
    return x.map((v) => byX.get(v) ?? null);
  };
  const counts = (spec: ChartSpec, i: number) => {
    const values = spec.counts?.[i];
    return values ? align(spec, values).map((n) => n ?? 0) : null;
  };
  const measured = (spec: ChartSpec) => spec.series.map((_, i) => i).filter((i) => !spec.styles[i]?.dash);
  const shownMeasured = measured(a);
  const shownStyle = (style: ChartStyle, i: number): ChartStyle => {
    if (style.dash || style.bars) return style;
    const dash = SERIES_DASH[shownMeasured.indexOf(i) % SERIES_DASH.length];
    return { ...style, colour: runColour(0), ...(dash ? { dash } : {}) };
  };
  const lines = others.flatMap(({ runId, spec }) =>
    measured(spec).map((i, k) => {
      const dash = SERIES_DASH[k % SERIES_DASH.length];
      return {
        label: `${runId}: ${spec.series[i]}`,
        y: align(spec, spec.y[i]!),
        counts: counts(spec, i),
        style: { colour: runColour(1 + order.indexOf(runId)), ...(dash ? { dash } : {}) } as ChartStyle,
      };
    }),
  );
  const { empty: _empty, ...base } = a;
  return {
    ...base,
    title: `${a.title}: ${nameA} against ${others.map((o) => o.runId).join(', ')}`,
    x,
    series: [...a.series.map((label) => `${nameA}: ${label}`), ...lines.map((line) => line.label)],
    y: [...a.y.map((values) => align(a, values)), ...lines.map((line) => line.y)],
    counts: [...a.series.map((_, i) => counts(a, i)), ...lines.map((line) => line.counts)],
    styles: [...a.styles.map(shownStyle), ...lines.map((line) => line.style)],
  };
}

/** A chart over wall-clock time as minutes since its first point, so two runs' curves start together. */
function elapsed(spec: ChartSpec): ChartSpec {
  if (!spec.time) return spec;
  const start = spec.x[0] ?? 0;
  const x = spec.empty ? [] : spec.x.map((t) => Math.round(((t - start) / 60) * 100) / 100);
  return { ...spec, time: false, xLabel: 'minutes since the run’s first point', x };
}
