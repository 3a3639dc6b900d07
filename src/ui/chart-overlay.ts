import type { ChartSpec } from './training-charts.js';

/** The compared run's lines: dashed, in its measurement's colour, so each pair reads as one quantity in two runs. */
const COMPARED_DASH = [3, 3];

/**
 * Two runs' charts on the same axes (`/runs/<a>?compare=<b>`): x values are merged, each run's series keep their
 * colour and the compared run's are dashed and prefixed with its name. Runs started at different times are
 * overlaid by time since each run's first point. The compared run's reference lines (bounds, η) are left out: the
 * shown run's are drawn once. Its histograms are drawn as lines over the shown run's bars.
 */
export function overlayCharts(shown: readonly ChartSpec[], compared: readonly ChartSpec[], names: [shown: string, compared: string]): ChartSpec[] {
  return shown.map((spec) => {
    const other = compared.find((c) => c.id === spec.id);
    if (!other || (spec.empty && other.empty)) return spec;
    return overlay(elapsed(spec), elapsed(other), names);
  });
}

function overlay(a: ChartSpec, b: ChartSpec, [nameA, nameB]: [string, string]): ChartSpec {
  const x = [...new Set([...(a.empty ? [] : a.x), ...(b.empty ? [] : b.x)])].sort((p, q) => p - q);
  const align = (spec: ChartSpec, values: readonly (number | null)[]) => {
    const byX = new Map(spec.empty ? [] : spec.x.map((v, i) => [v, values[i] ?? null]));
    return x.map((v) => byX.get(v) ?? null);
  };
  const measured = b.series.map((_, i) => i).filter((i) => !b.styles[i]?.dash);
  const counts = (spec: ChartSpec, i: number) => {
    const values = spec.counts?.[i];
    return values ? align(spec, values).map((n) => n ?? 0) : null;
  };
  const { empty: _empty, ...base } = a;
  return {
    ...base,
    title: `${a.title}: ${nameA} against ${nameB}`,
    x,
    series: [...a.series.map((label) => `${nameA}: ${label}`), ...measured.map((i) => `${nameB}: ${b.series[i]}`)],
    y: [...a.y.map((values) => align(a, values)), ...measured.map((i) => align(b, b.y[i]!))],
    counts: [...a.series.map((_, i) => counts(a, i)), ...measured.map((i) => counts(b, i))],
    styles: [...a.styles, ...measured.map((i) => ({ colour: b.styles[i]!.colour, dash: COMPARED_DASH }))],
  };
}

/** A chart over wall-clock time as minutes since its first point, so two runs' curves start together. */
function elapsed(spec: ChartSpec): ChartSpec {
  if (!spec.time) return spec;
  const start = spec.x[0] ?? 0;
  const x = spec.empty ? [] : spec.x.map((t) => Math.round((t - start) / 60 * 100) / 100);
  return { ...spec, time: false, xLabel: 'minutes since the run’s first point', x };
}
