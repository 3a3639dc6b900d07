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
 * Serves the read-only UI on loopback (it shows prompts and answers; exposing it is the operator's decision: the
 * compose file binds the container's port to the host's loopback). Port 0 picks a free one; the url says which.
 */
export async function startRatchetUi(options: {
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  temporal?: TemporalAccess;
  port?: number;
  host?: string;
}): Promise<RunningUi> {
  const app = uiApp({ ...options, assets: await loadAssets() });
  const host = options.host ?? '127.0.0.1';
  const server = serve({ fetch: app.fetch, hostname: host, port: options.port ?? DEFAULT_UI_PORT });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Polling pages keep connections alive; close them so stopping never waits on a browser tab.
        (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
      }),
  };
}
