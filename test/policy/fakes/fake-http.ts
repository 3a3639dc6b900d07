import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** What a fake server saw of one generation request, keyed by our request id. */
export interface ServedRequest {
  body: Record<string, unknown>;
  sentIds: number[];
  sentLogprobs: number[];
  end?: 'stop' | 'length' | 'abort' | 'disconnect' | 'drop';
}

export type FakeFault = 'none' | 'error' | 'drop';

export type Handler = (request: http.IncomingMessage, body: unknown, response: http.ServerResponse) => Promise<void> | void;

/** Starts an HTTP server on an ephemeral port; `close` also cuts open streams. */
export async function listen(handler: Handler): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((request, response) => {
    void readJson(request)
      .then((body) => handler(request, body, response))
      .catch((error: Error) => {
        if (!response.headersSent) sendJson(response, 500, { error: { message: error.message } });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function sendJson(response: http.ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json' });
  response.end(JSON.stringify(body));
}

export function startEvents(response: http.ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  response.flushHeaders();
}

export function sendEvent(response: http.ServerResponse, data: unknown): void {
  if (!response.destroyed) response.write(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`);
}

/** Waits `ms`; false when the client disconnected or `signal` fired first. */
export function pause(ms: number, response: http.ServerResponse, signal: AbortSignal): Promise<boolean> {
  if (response.destroyed || signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const stop = () => settle(false);
    const timer = setTimeout(() => settle(true), ms);
    const settle = (value: boolean) => {
      clearTimeout(timer);
      response.off('close', stop);
      signal.removeEventListener('abort', stop);
      resolve(value);
    };
    response.once('close', stop);
    signal.addEventListener('abort', stop, { once: true });
  });
}

/** A deterministic "model": output ids derived from the prompt, ending in `eos` when they fit. */
export function fakeOutput(
  prompt: readonly number[],
  length: number,
  maxNewTokens: number,
  eos: number,
): { ids: number[]; logprobs: number[]; finish: 'stop' | 'length' } {
  const seed = prompt.reduce((sum, id) => sum + id, 0);
  const full = [...Array.from({ length: length - 1 }, (_, i) => 1000 + ((seed + i * 31) % 5000)), eos];
  const ids = full.slice(0, maxNewTokens);
  return { ids, logprobs: ids.map((_, i) => -0.01 - (i % 7) * 0.1), finish: ids.length === full.length ? 'stop' : 'length' };
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  if (chunks.length === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A port nothing listens on: bind an ephemeral one, then release it. */
export function closedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = http.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** A fake server's prompt scores: the simulated policy's, a function of the checkpoint path it last loaded. */
export { scoredInput as fakePromptLogprobs } from '../../../src/policy/simulated/server.js';
