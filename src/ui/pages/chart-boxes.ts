import { html } from 'hono/html';
import type { Html } from '../layout.js';
import type { ChartSpec } from '../training-charts.js';

/** What a chart's x axis counts: the run page's x-axis picker shows the charts over one of them (and every other chart). */
export type ChartAxis = 'time' | 'version' | 'step' | 'other';

export function chartAxis(chart: ChartSpec): ChartAxis {
  if (chart.time) return 'time';
  if (/training step/.test(chart.xLabel)) return 'step';
  if (/version/.test(chart.xLabel)) return 'version';
  return 'other';
}

/** The boxes the client script draws charts into: there even while a chart is empty, so the page's poll fills them. */
export function chartBoxes(charts: readonly ChartSpec[]): Html {
  return html`<div class="charts">${charts.map((chart) => html`<div class="chart" id="${chart.id}" data-axis="${chartAxis(chart)}"></div>`)}</div>`;
}
