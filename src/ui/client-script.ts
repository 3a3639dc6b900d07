/**
 * The browser side, served as /assets/ratchet-ui.js: draws uPlot charts from embedded JSON and keeps live pages
 * current by polling the JSON API (no framework, no build step). Charts are kept on window.ratchetCharts so a
 * test (or a curious user) can see what was drawn.
 */
export const CLIENT_SCRIPT = `
window.ratchetCharts = {};
window.RatchetUI = {
  chart(id, spec) {
    const el = document.getElementById(id);
    if (!el) return;
    const old = window.ratchetCharts[id];
    if (old) old.destroy();
    delete window.ratchetCharts[id];
    el.innerHTML = '';
    if (spec.empty) {
      const note = document.createElement('p');
      note.className = 'muted empty';
      note.textContent = spec.title + ': ' + spec.empty;
      return el.appendChild(note);
    }
    const bars = spec.bars ? uPlot.paths.bars({ size: [0.8, 40] }) : undefined;
    const colours = ['#1d5fbf', '#1f8a4c', '#c0392b', '#b9770e'];
    // Turns, versions and steps are whole numbers: pad the x range and tick on integers only. uPlot ranges a lone
    // x value as 0..100, so one version or one step is centred by hand.
    const discreteX = (u, lo, hi) => spec.x.length === 1 ? [spec.x[0] - 0.5, spec.x[0] + 0.5] : [lo - 0.5, hi + 0.5];
    const x = spec.discrete ? { time: false, range: discreteX } : { time: !!spec.time };
    const y = spec.yRange ? { range: spec.yRange } : spec.yFromZero ? { range: (u, lo, hi) => [Math.min(0, lo), hi > 0 ? hi * 1.1 : 1] } : {};
    const options = {
      title: spec.title, width: spec.width || 420, height: 220, scales: { x, y },
      axes: [spec.discrete ? { label: spec.xLabel, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000] } : { label: spec.xLabel }, { label: spec.yLabel }],
      // spec.styles (training charts): a colour per series, dashed for reference lines (bounds, η), drawn without points.
      series: [{}].concat(spec.series.map((name, i) => {
        const style = spec.styles ? spec.styles[i] : { colour: colours[i % 4] };
        return { label: name, stroke: style.colour, dash: style.dash, fill: spec.bars ? style.colour + '88' : undefined,
          paths: bars, points: { show: !style.dash, size: 6 }, spanGaps: false };
      })),
    };
    window.ratchetCharts[id] = new uPlot(options, [spec.x].concat(spec.y), el);
  },
  runCharts(curves) {
    const byTurn = curves.byTurn, time = curves.overTime, version = curves.byVersion, lengths = curves.outputLengths;
    this.chart('chart-by-turn', { title: 'success rate by turn', xLabel: 'turn', yLabel: 'success', yRange: [0, 1], series: ['success'], discrete: true,
      x: byTurn.map((p) => p.turn + 1), y: [byTurn.map((p) => p.successRate)] });
    this.chart('chart-over-time', { title: 'success over time', time: true, yRange: [0, 1], series: ['first turn', 'any turn'],
      x: time.map((p) => p.time / 1000), y: [time.map((p) => p.firstTurnSuccess), time.map((p) => p.anySuccess)] });
    this.chart('chart-by-version', { title: 'turn success by policy version', xLabel: 'policy version of the turn’s last token', yRange: [0, 1], series: ['success'], discrete: true,
      x: version.map((p) => p.version), y: [version.map((p) => p.successRate)] });
    this.chart('chart-lengths', { title: 'output length (tokens)', xLabel: 'tokens', yLabel: 'turns', bars: true, series: ['turns'],
      x: lengths.map((p) => p.from), y: [lengths.map((p) => p.turns)] });
  },
  charts(specs) {
    for (const spec of specs) this.chart(spec.id, spec);
  },
  pollRun(runId) {
    const tick = async () => {
      const view = await fetch('/api/runs/' + encodeURIComponent(runId)).then((r) => r.json()).catch(() => null);
      if (!view) return setTimeout(tick, 5000);
      for (const [name, value] of Object.entries(view.counters)) {
        const el = document.querySelector('[data-counter="' + name + '"]');
        if (el && typeof value !== 'object') el.textContent = value === null ? '–' : (Number.isInteger(value) ? value : value.toFixed(1));
      }
      this.runCharts(view.curves);
      this.charts(view.trainingCharts);
      document.body.dataset.refreshed = String(Number(document.body.dataset.refreshed || 0) + 1);
      // Keep polling while the tab is open: a run that is idle now may get new submissions.
      setTimeout(tick, view.live ? 2000 : 5000);
    };
    setTimeout(tick, 1000);
  },
  pollTrajectory(id, stamp) {
    const tick = async () => {
      const now = await fetch('/api/trajectories/' + encodeURIComponent(id) + '/stamp').then((r) => r.json());
      if (now.stamp !== stamp) location.reload();
      else if (!now.final) setTimeout(tick, 1500);
    };
    setTimeout(tick, 1500);
  },
  pollLive() { setTimeout(() => location.reload(), 3000); },
};
`;
