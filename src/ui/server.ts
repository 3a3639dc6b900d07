import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { uiApp } from './app.js';
import { loadAssets } from './assets.js';
import type { TemporalAccess } from './workflow-lookup.js';

export const DEFAULT_UI_PORT = 8300;

export interface RunningUi {
  url: string;
  close(): Promise<void>;
}

/**
 * Serves the read-only UI on loopback (it shows prompts and answers; exposing it is the operator's decision, made
 * with a proxy in front). Port 0 picks a free one; the returned url says which.
 */
export async function startRatchetUi(options: { pool: pg.Pool; tokenizer: ModelTokenizer; temporal?: TemporalAccess; port?: number }): Promise<RunningUi> {
  const app = uiApp({ ...options, assets: await loadAssets() });
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: options.port ?? DEFAULT_UI_PORT });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.close(() => resolve());
      // Polling pages keep connections alive; close them so stopping never waits on a browser tab.
      (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
    }),
  };
}
