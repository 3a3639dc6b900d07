import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CLIENT_SCRIPT } from './client-script.js';

/** Static files the pages load, all from this package or node_modules: the UI never reaches the internet. */
export interface Asset {
  type: string;
  body: string;
}

export async function loadAssets(): Promise<Map<string, Asset>> {
  const uplot = path.dirname(createRequire(import.meta.url).resolve('uplot/package.json'));
  return new Map([
    ['uPlot.iife.min.js', { type: 'text/javascript; charset=utf-8', body: await readFile(path.join(uplot, 'dist/uPlot.iife.min.js'), 'utf8') }],
    ['uPlot.min.css', { type: 'text/css; charset=utf-8', body: await readFile(path.join(uplot, 'dist/uPlot.min.css'), 'utf8') }],
    ['ratchet-ui.js', { type: 'text/javascript; charset=utf-8', body: CLIENT_SCRIPT }],
  ]);
}
