import http from 'node:http';
import https from 'node:https';
import type { Socket } from 'node:net';
import type { z } from 'zod';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';

const JSON_HEADERS = { 'content-type': 'application/json' };

/**
 * One HTTP call to an inference server. A network failure becomes PolicyUnavailable naming the cause;
 * an abort by the caller's own signal is rethrown as the signal's reason (a cancellation is not a server fault).
 */
export async function send(url: string, init: RequestInit & { json?: unknown }, signal?: AbortSignal): Promise<Response> {
  const { json, ...rest } = init;
  try {
    return await fetch(url, {
      ...rest,
      ...(json === undefined ? {} : { body: JSON.stringify(json), headers: { ...JSON_HEADERS, ...rest.headers } }),
      signal,
    });
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new PolicyUnavailable(url, describeNetworkError(error), { cause: error });
  }
}

/** A streamed answer: its status, its body's bytes as they arrive, or its whole text (for an error's message). */
export interface StreamedResponse {
  status: number;
  ok: boolean;
  /** Leaving a loop over it early leaves the connection open: `release` or `close` it then. */
  body: AsyncIterable<Uint8Array>;
  text(): Promise<string>;
  /** The caller has what it wanted (the finish reason): the rest is read and dropped, and the connection reused. */
  release(): void;
  /** Closes the connection, which tells the server to stop (a request given up on). */
  close(): void;
}

/** fetch's (undici's) keep-alive: an idle connection is closed after 4 s, before a server's own 5 s (uvicorn's) can. */
const IDLE_CONNECTION_MS = 4_000;

function keepAliveAgent<T extends http.Agent>(agent: T): T {
  const keep = agent.keepSocketAlive.bind(agent);
  agent.keepSocketAlive = (socket) => {
    const kept = keep(socket) as unknown as boolean;
    // A free socket whose timeout fires is destroyed by the agent; a request that takes it sets its own.
    (socket as Socket).setTimeout(IDLE_CONNECTION_MS);
    return kept as never;
  };
  return agent;
}

// Connections kept open between requests, as fetch's own pool keeps them.
const AGENTS = { 'http:': keepAliveAgent(new http.Agent({ keepAlive: true })), 'https:': keepAliveAgent(new https.Agent({ keepAlive: true })) };
/** fetch's (undici's) limit on a silent server: no headers, or no body bytes, for this long fails the request. */
const IDLE_TIMEOUT_MS = 300_000;

/**
 * POSTs `json` for a streamed answer over node:http, the token stream's request on every turn: fetch costs several
 * times the CPU per request (its Request and Response objects, web streams, and a copy of the body kept for
 * redirects). It fails as `send` does: PolicyUnavailable naming the network error, or the reason of `signal`.
 * Unlike fetch it follows no redirect (an inference server answers /generate itself); a 3xx is a failed request.
 */
export function postForStream(url: string, json: unknown, headers: Record<string, string> = {}, signal?: AbortSignal): Promise<StreamedResponse> {
  return new Promise((resolve, reject) => {
    const fail = (error: unknown) =>
      reject(signal?.aborted ? signal.reason : new PolicyUnavailable(url, describeNetworkError(error), { cause: error }));
    let target: URL;
    try {
      target = new URL(url);
    } catch (error) {
      fail(error);
      return;
    }
    const protocol = target.protocol === 'https:' ? 'https:' : target.protocol === 'http:' ? 'http:' : undefined;
    if (!protocol) {
      fail(new Error(`unsupported protocol ${target.protocol}`));
      return;
    }
    const payload = Buffer.from(JSON.stringify(json));
    const request = (protocol === 'https:' ? https : http).request(
      target,
      {
        method: 'POST',
        agent: AGENTS[protocol],
        headers: { ...JSON_HEADERS, accept: '*/*', ...headers, 'content-length': String(payload.length) },
        ...(signal ? { signal } : {}),
      },
      (response) => {
        const status = response.statusCode ?? 0;
        resolve({
          status,
          ok: status >= 200 && status < 300,
          body: response.iterator({ destroyOnReturn: false }) as AsyncIterable<Uint8Array>,
          text: () => readText(response),
          release: () => void response.resume(),
          close: () => void response.destroy(),
        });
      },
    );
    request.setTimeout(IDLE_TIMEOUT_MS, () => request.destroy(new Error(`no data from the server for ${IDLE_TIMEOUT_MS / 1000} s`)));
    request.on('error', fail);
    request.end(payload);
  });
}

async function readText(body: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Buffer[] = [];
  for await (const bytes of body) parts.push(Buffer.from(bytes));
  return Buffer.concat(parts).toString('utf8');
}

/** The typed error for a non-2xx answer: 429 and 5xx are the server's trouble (retry), other 4xx the request's. */
export async function failureFor(url: string, response: { status: number; text(): Promise<string> }): Promise<Error> {
  const body = await response.text().catch(() => '');
  const message = serverMessage(body);
  if (response.status === 429 || response.status >= 500) return new PolicyUnavailable(url, `HTTP ${response.status}: ${message.slice(0, 300)}`);
  return new PolicyRejectedRequest(url, response.status, message);
}

/** Sends a request and parses a 2xx JSON answer against `schema`; `stop` abandons it (rethrowing its reason). */
export async function requestJson<T>(
  url: string,
  init: RequestInit & { json?: unknown },
  schema: z.ZodType<T>,
  timeoutMs = 30_000,
  stop?: AbortSignal,
): Promise<T> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const signal = stop ? AbortSignal.any([timeout, stop]) : timeout;
  const response = await send(url, init, signal).catch((error: unknown) => {
    throw timeout.aborted ? new PolicyUnavailable(url, `no answer within ${timeoutMs} ms`, { cause: error }) : error;
  });
  if (!response.ok) throw await failureFor(url, response);
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new PolicyProtocolError(url, `response is not JSON: ${text.slice(0, 200)}`);
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new PolicyProtocolError(url, parsed.error.message);
  return parsed.data;
}

/** Parses one JSON payload of a stream, or throws PolicyProtocolError. */
export function parseJson(url: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new PolicyProtocolError(url, `stream chunk is not JSON: ${text.slice(0, 200)}`);
  }
}

/**
 * The human message inside an error body. SGLang answers `{"error": {"message"}}` (its `_create_error_response`)
 * or `{"object": "error", "message", "type", "code"}` (its ErrorResponse for validation errors); vLLM answers
 * `{"error": {"message", "type", "param", "code"}}` (serve/engine/protocol.py `ErrorResponse`), older releases the
 * flat `{"object": "error", "message", ...}`; FastAPI's own 4xx carry `{"detail": ...}`.
 */
export function serverMessage(body: string): string {
  try {
    const json = JSON.parse(body) as Record<string, unknown>;
    const nested = json['error'];
    if (nested && typeof nested === 'object' && typeof (nested as Record<string, unknown>)['message'] === 'string') {
      return (nested as Record<string, string>)['message']!;
    }
    if (typeof nested === 'string') return nested;
    if (typeof json['message'] === 'string') return json['message'];
    if (json['detail'] !== undefined) return typeof json['detail'] === 'string' ? json['detail'] : JSON.stringify(json['detail']);
  } catch {
    // not JSON: the raw text is the message
  }
  return body;
}

/** undici hides the useful part ("ECONNREFUSED", "other side closed") in `cause`. */
export function describeNetworkError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
  return `${error.message}${cause}`;
}

/** `GET /health` answered 200 within two seconds (both SGLang and vLLM serve it). */
export async function answersHealthy(baseUrl: string, headers: Record<string, string> = {}): Promise<boolean> {
  try {
    const response = await send(`${baseUrl}/health`, { method: 'GET', headers }, AbortSignal.timeout(2_000));
    await response.body?.cancel();
    return response.status === 200;
  } catch {
    return false;
  }
}
