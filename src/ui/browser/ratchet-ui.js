/**
 * The browser side, served as /assets/ratchet-ui.js: draws uPlot charts from embedded JSON and keeps live pages
 * current by polling the JSON API (no framework, no build step). Charts are kept on window.ratchetCharts so a
 * test (or a curious user) can see what was drawn. Plain browser JavaScript, loaded by src/ui/assets.ts.
 */
/* global uPlot */
window.ratchetCharts = {};
// Legend values: whole numbers as they are, others to three decimals.
const ratchetNumber = (v) =>
  v === null || v === undefined ? '–' : Number.isInteger(v) ? String(v) : Math.abs(v) >= 0.01 || v === 0 ? v.toFixed(3) : v.toExponential(2);
window.RatchetUI = {
  /**
   * Draws a chart, or updates the one already drawn in place: a poll swaps the data (uPlot setData), so a zoom
   * survives it; only a new shape (other series, an empty chart filling) rebuilds it.
   */
  chart(id, raw) {
    const el = document.getElementById(id);
    if (!el) return;
    const spec = this.smoothed(raw);
    const shape = JSON.stringify([
      spec.title,
      spec.xLabel,
      spec.yLabel,
      spec.series,
      spec.styles,
      spec.empty,
      spec.discrete,
      spec.time,
      spec.bars,
      spec.yRange,
      spec.yFromZero,
    ]);
    const old = window.ratchetCharts[id];
    if (old && old.ratchet.shape === shape) return this.update(old, spec);
    if (!old && el.dataset.shape === shape) return;
    if (old) old.destroy();
    delete window.ratchetCharts[id];
    el.innerHTML = '';
    el.dataset.shape = shape;
    if (spec.empty) {
      const note = document.createElement('p');
      note.className = 'muted empty';
      note.textContent = spec.title + ': ' + spec.empty;
      return el.appendChild(note);
    }
    const state = { shape, spec, marked: [], xRange: null };
    const bars = uPlot.paths.bars({ size: [0.9, 200] });
    // The x range of the data: whole-number x (turns, versions, steps) and histogram bars padded so no point or bar
    // sits on the edge, a lone x centred (uPlot ranges one value as 0..100). A user's zoom is taken as given.
    const xRange = (u, lo, hi) => {
      const d = u.data[0],
        s = state.spec;
      if (!d || d.length === 0) return [lo, hi];
      const first = d[0],
        last = d[d.length - 1];
      if (d.length > 1 && (lo !== first || hi !== last)) return [lo, hi];
      const pad = s.bars
        ? (s.barWidth || 1) / 2
        : s.discrete
          ? 0.5
          : s.time
            ? first === last
              ? 60
              : 0
            : first === last
              ? Math.max(Math.abs(first) / 10, 0.5)
              : 0;
      return [first - pad, last + pad];
    };
    state.xRange = xRange;
    const y = spec.yRange ? { range: spec.yRange } : spec.yFromZero ? { range: (u, lo, hi) => [Math.min(0, lo ?? 0), hi > 0 ? hi * 1.1 : 1] } : {};
    // A legend value says how many samples the point rests on, and flags too few.
    const value = (u, v, si, i) => {
      const counts = state.spec.counts && state.spec.counts[si - 1];
      const n = counts && i !== null && i !== undefined ? counts[i] : undefined;
      if (v === null || v === undefined || n === undefined || n === null) return ratchetNumber(v);
      return ratchetNumber(v) + ' · n=' + n + (n < (state.spec.fewBelow || 0) ? ' (few)' : '');
    };
    // Points resting on fewer than fewBelow samples are ringed (and listed in chart.ratchet.marked).
    const ringFew = (u) => {
      const s = state.spec,
        marked = [];
      if (!s.counts || !s.fewBelow) return (state.marked = marked);
      const ctx = u.ctx,
        r = 7 * devicePixelRatio;
      ctx.save();
      ctx.strokeStyle = '#b9770e';
      ctx.lineWidth = 1.5 * devicePixelRatio;
      s.counts.forEach((counts, k) => {
        if (!counts) return;
        counts.forEach((n, i) => {
          const v = u.data[k + 1][i];
          if (v === null || v === undefined || n >= s.fewBelow) return;
          marked.push([k, i]);
          ctx.beginPath();
          ctx.arc(u.valToPos(u.data[0][i], 'x', true), u.valToPos(v, 'y', true), r, 0, 2 * Math.PI);
          ctx.stroke();
        });
      });
      ctx.restore();
      state.marked = marked;
    };
    // A rate's Wilson 95% interval, shaded under its line from the samples each point rests on (pooled ones when
    // smoothed): the band a point's n allows, so a rate over few samples shows how little it says.
    const shadeBands = (u) => {
      const s = state.spec,
        bands = [];
      const ctx = u.ctx;
      s.styles.forEach((style, k) => {
        const counts = (s.bandCounts || s.counts || [])[k];
        if (style.band !== 'wilson' || !counts) return;
        const points = [];
        const flush = () => {
          if (points.length > 0) {
            ctx.beginPath();
            points.forEach(([x, lo], j) => (j === 0 ? ctx.moveTo(x, lo) : ctx.lineTo(x, lo)));
            for (let j = points.length - 1; j >= 0; j--) ctx.lineTo(points[j][0], points[j][2]);
            // A lone point (its neighbours empty) gets a bar of the band's height.
            if (points.length === 1) ctx.rect(points[0][0] - 3 * devicePixelRatio, points[0][2], 6 * devicePixelRatio, points[0][1] - points[0][2]);
            ctx.fill();
          }
          points.length = 0;
        };
        ctx.save();
        ctx.fillStyle = style.colour + '2e';
        u.data[k + 1].forEach((v, i) => {
          const band = v === null || v === undefined ? null : window.RatchetUI.wilson(v * counts[i], counts[i]);
          if (!band) return flush();
          bands.push([k, i, band[0], band[1]]);
          points.push([u.valToPos(u.data[0][i], 'x', true), u.valToPos(band[0], 'y', true), u.valToPos(band[1], 'y', true)]);
        });
        flush();
        ctx.restore();
      });
      state.bands = bands;
    };
    const options = {
      title: spec.title,
      width: spec.width || 420,
      height: 220,
      scales: { x: { time: !!spec.time, range: xRange }, y },
      axes: [
        spec.discrete ? { label: spec.xLabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] } : { label: spec.xLabel },
        { label: spec.yLabel },
      ],
      series: [{}].concat(
        spec.series.map((name, i) => {
          const style = spec.styles[i];
          return {
            label: name,
            stroke: style.colour,
            dash: style.dash,
            fill: style.bars ? style.colour + '88' : undefined,
            value,
            paths: style.bars ? bars : undefined,
            points: { show: !style.dash && !style.bars, size: 6 },
            spanGaps: false,
          };
        }),
      ),
      hooks: { draw: [shadeBands, ringFew] },
    };
    const chart = new uPlot(options, [spec.x].concat(spec.y), el);
    chart.ratchet = state;
    window.ratchetCharts[id] = chart;
  },
  /** New data for a drawn chart: rescaled to it unless the user has zoomed, whose x window is kept. */
  update(chart, spec) {
    const x = chart.scales.x,
      d = chart.data[0];
    const full = chart.ratchet.xRange(chart, d[0], d[d.length - 1]);
    const zoomed = d.length > 0 && (Math.abs(x.min - full[0]) > 1e-9 || Math.abs(x.max - full[1]) > 1e-9);
    chart.ratchet.spec = spec;
    const data = [spec.x].concat(spec.y);
    if (!zoomed) return chart.setData(data);
    chart.setData(data, false);
    chart.setScale('x', { min: x.min, max: x.max });
  },
  charts(specs) {
    this.specs = specs;
    const picker = document.getElementById('smoothing');
    if (picker) picker.value = String(this.smoothing);
    const axis = document.getElementById('x-axis');
    if (axis && !document.body.dataset.axis) {
      axis.value = localStorage.getItem('ratchet-axis') || 'all';
      document.body.dataset.axis = axis.value;
    }
    for (const spec of specs) this.chart(spec.id, spec);
  },
  /** The Wilson score interval at 95% of `successes` of `n`, [low, high]; null when n is 0 (as src/ui/wilson.ts). */
  wilson(successes, n) {
    if (!(n > 0)) return null;
    const z2 = 1.96 * 1.96,
      p = successes / n;
    const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
    const half = (1.96 / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
    return [Math.max(0, centre - half), Math.min(1, centre + half)];
  },
  /** Points each side a smoothed point pools (0: off); the run page's smoothing picker sets it, the browser keeps it. */
  smoothing: Number(localStorage.getItem('ratchet-smoothing') || 0),
  /**
   * A chart's measured lines pooled over a window of neighbouring points, each weighted by the samples it rests on (so
   * a smoothed rate is the rate of the pooled samples); gaps stay gaps, and bars and reference lines are left alone.
   */
  smoothed(spec) {
    const k = this.smoothing;
    if (!k || spec.bars || spec.empty || !spec.counts) return spec;
    // The samples each smoothed point pools: a band is the interval of the pooled rate over them.
    const bandCounts = spec.counts.map((counts) => counts && counts.slice());
    const y = spec.y.map((values, si) => {
      const counts = spec.counts[si];
      if (!counts) return values;
      return values.map((v, i) => {
        if (v === null || v === undefined) return v;
        let sum = 0,
          n = 0;
        for (let j = Math.max(0, i - k); j <= Math.min(values.length - 1, i + k); j++) {
          if (values[j] === null || values[j] === undefined) continue;
          sum += values[j] * counts[j];
          n += counts[j];
        }
        bandCounts[si][i] = n;
        return n > 0 ? sum / n : v;
      });
    });
    return { ...spec, y, bandCounts, title: spec.title + ' · smoothed over ' + (2 * k + 1) + ' points' };
  },
  /** The x-axis picker: hides the charts over the other axes (histograms and charts by turn stay), kept for the next page. */
  axis(name) {
    document.body.dataset.axis = name;
    localStorage.setItem('ratchet-axis', name);
  },
  /** The smoothing picker: redraws every chart at once and keeps the choice for the next page. */
  smooth(k) {
    this.smoothing = Number(k) || 0;
    localStorage.setItem('ratchet-smoothing', String(this.smoothing));
    if (this.specs) this.charts(this.specs);
  },
  pollRun(runId, compare) {
    const query = compare ? '?compare=' + encodeURIComponent(compare) : '';
    const tick = async () => {
      const response = await fetch('/api/runs/' + encodeURIComponent(runId) + query).catch(() => null);
      // A run that is gone (or never was) is said once, and the page stops asking.
      if (response && response.status === 404) return this.notFound(await response.json().catch(() => ({})));
      const view = response && response.ok ? await response.json().catch(() => null) : null;
      if (!view) return setTimeout(tick, 5000);
      for (const [name, value] of Object.entries(view.counters)) {
        // A counter may be shown twice (its box and the headline): every copy follows.
        for (const el of document.querySelectorAll('[data-counter="' + name + '"]'))
          if (typeof value !== 'object') el.textContent = this.counterText(value);
      }
      // Turn affinity and prefix-cache shares, as runs-page.ts percentText writes them.
      for (const [name, value] of Object.entries(view.servers || {})) {
        const el = document.querySelector('[data-server-share="' + name + '"]');
        if (el) el.textContent = typeof value === 'number' ? (value * 100).toFixed(1) + '%' : '–';
      }
      this.charts(view.charts);
      if (view.batches) this.batches(view.batches);
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      // Keep polling while the tab is open: a run that is idle now may get new submissions.
      setTimeout(tick, view.live ? 2000 : 5000);
    };
    setTimeout(tick, 1000);
  },
  /** As the page renders counters (runs-page.ts counterText): small rates keep two significant digits. */
  counterText(value) {
    if (value === null) return '–';
    if (Number.isInteger(value)) return String(value);
    return Math.abs(value) < 10 ? value.toPrecision(2) : value.toFixed(1);
  },
  /** A run's 404 page: reloads into the run page once the run exists, asking for at most `minutes`, then stops. */
  awaitRun(runId, minutes) {
    const until = Date.now() + minutes * 60_000;
    const tick = async () => {
      const response = await fetch('/api/runs/' + encodeURIComponent(runId)).catch(() => null);
      if (response && response.ok) return location.reload();
      if (Date.now() < until) setTimeout(tick, 3000);
      else document.getElementById('awaiting')?.remove();
    };
    setTimeout(tick, 3000);
  },
  /** The poll's 404: its message at the top of the page, polling stopped. */
  notFound(body) {
    const note = document.createElement('p');
    note.id = 'not-found';
    note.className = 'flag';
    note.textContent = (body && body.error) || 'This run was not found.';
    document.querySelector('main')?.prepend(note);
    document.body.dataset.polling = 'stopped';
  },
  /** The batches table, rewritten from the poll: new claims and acknowledgements show without a reload. */
  batches({ total, latest }) {
    const table = document.getElementById('batches');
    if (!table) return;
    for (const row of table.querySelectorAll('tr[data-batch]')) row.remove();
    for (const b of latest) {
      const row = table.insertRow();
      row.dataset.batch = b.batchId;
      const acked = b.ackedAt || (new Date(b.leaseExpiresAt).getTime() < Date.now() ? 'no: lease ran out' : 'not yet');
      [
        b.batchId.slice(0, 8),
        b.consumer,
        b.policyVersion,
        b.groups,
        b.trajectories,
        b.staleTrajectories,
        b.claimedAt,
        b.leaseExpiresAt,
        acked,
      ].forEach((value, i) => {
        const cell = row.insertCell();
        cell.textContent = String(value);
        if (i >= 2 && i <= 5) cell.className = 'num';
      });
    }
    const count = document.getElementById('batch-count');
    if (count) count.textContent = String(total);
  },
  pollTrajectory(id, stamp) {
    const tick = async () => {
      const now = await fetch('/api/trajectories/' + encodeURIComponent(id) + '/stamp').then((r) => r.json());
      if (now.stamp !== stamp) location.reload();
      else if (!now.final) setTimeout(tick, 1500);
    };
    setTimeout(tick, 1500);
  },
  pollLive() {
    setTimeout(() => location.reload(), 3000);
  },
};
