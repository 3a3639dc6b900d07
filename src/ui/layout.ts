import { readFileSync } from 'node:fs';
import { html, raw } from 'hono/html';
import type { HtmlEscapedString } from 'hono/utils/html';

/** The UI's one stylesheet (browser/ui-style.css, a few rules), served inline: no build step, nothing fetched. */
const UI_STYLE = readFileSync(new URL('./browser/ui-style.css', import.meta.url), 'utf8');

export type Html = HtmlEscapedString | Promise<HtmlEscapedString>;

/** The page shell every view shares: the nav, the style, uPlot and the page's own client script. */
export function page(title: string, body: Html, script = ''): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${title} · Ratchet</title>
<link rel="stylesheet" href="/assets/uPlot.min.css"><style>${raw(UI_STYLE)}</style>
<script src="/assets/uPlot.iife.min.js"></script><script src="/assets/ratchet-ui.js"></script></head>
<body><nav><a href="/" class="brand">Ratchet</a><a href="/">Runs</a><a href="/live">Live</a>
<form action="/go" method="get" id="search"><input name="id" placeholder="run, group, trajectory id or qid (or part)" size="36"></form></nav>
<main>${body}</main>${script ? raw(`<script>${script}</script>`) : ''}</body></html>`;
}

/** A JSON value embedded for the client script: `<` is escaped so no text can close the script element. */
export function embedded(value: unknown): string {
  return JSON.stringify(value).replace(/</g, '\\u003c');
}

export function trajectoryHref(trajectoryId: string): string {
  return `/trajectories/${encodeURIComponent(trajectoryId)}`;
}

export function groupHref(groupId: string): string {
  return `/groups/${encodeURIComponent(groupId)}`;
}

export function runHref(runId: string): string {
  return `/runs/${encodeURIComponent(runId)}`;
}

/** A trajectory's group id: its id without the last `/sample` (how run and client ids are built). */
export function groupOf(trajectoryId: string): string {
  return trajectoryId.slice(0, trajectoryId.lastIndexOf('/'));
}

export function fixed(value: number | null | undefined, digits = 2): string {
  return value === null || value === undefined || Number.isNaN(value) ? '–' : value.toFixed(digits);
}

/** A counter's number: whole numbers as they are, small rates to two significant digits (the poll writes them the same way). */
export function numberText(value: number | null): string {
  if (value === null) return '–';
  return Number.isInteger(value) ? String(value) : Math.abs(value) < 10 ? value.toPrecision(2) : value.toFixed(1);
}
