import { html, raw } from 'hono/html';
import type { Html } from '../layout.js';

/** A colour per policy version, stable across pages (−1, not generated, is grey). */
export function versionColour(version: number): string {
  return version < 0 ? '#c9ced8' : `hsl(${(210 + version * 67) % 360} 62% 52%)`;
}

/**
 * The per-token policy versions of one output as a strip: one segment per run of equal versions, as wide as the
 * run, so a turn that straddled a weight update shows where the new version took over.
 */
export function versionStrip(versions: readonly number[]): Html {
  const runs: { version: number; length: number }[] = [];
  for (const version of versions) {
    const last = runs[runs.length - 1];
    if (last && last.version === version) last.length++;
    else runs.push({ version, length: 1 });
  }
  const segments = runs
    .map(
      (run) =>
        `<span style="flex-grow:${run.length};background:${versionColour(run.version)}" title="v${run.version} × ${run.length} tokens" data-version="${run.version}"></span>`,
    )
    .join('');
  const legend = [...new Set(versions)].map((v) => `<span style="background:${versionColour(v)}"></span>v${v}`).join(' ');
  return html`<div class="strip" data-tokens="${versions.length}">${raw(segments)}</div><div class="legend muted">${raw(legend)}</div>`;
}
