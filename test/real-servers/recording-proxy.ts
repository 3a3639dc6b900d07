import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FakeFault, ServedRequest } from '../policy/fakes/fake-http.js';

/**
 * A pass-through HTTP proxy in front of a real server that records, per `x-request-id`, what the server was
 * sent and what it streamed back, so the backend contract can compare the backend's view with the wire. Its only
 * faults are the network's: `drop` cuts a stream after its first event, `error` answers 502 as a load balancer
 * in front of a dead upstream does. A client that disconnects is disconnected upstream too (vLLM then aborts).
 */
export async function startRecordingProxy(upstream: string) {
  const served = new Map<string, ServedRequest>();
  const requests: Array<{ path: string; body: unknown }> = [];
  let fault: FakeFault = 'none';
  const target = new URL(upstream);

  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      requests.push({ path: request.url ?? '', body: parsedBody(body) });
      const requestId = request.headers['x-request-id'];
      const generation = request.method === 'POST' && request.url === '/v1/completions' && typeof requestId === 'string';
      let record: ServedRequest | undefined;
      if (generation) {
        record = { body: (parsedBody(body) ?? {}) as Record<string, unknown>, sentIds: [], sentLogprobs: [] };
        served.set(requestId, record);
        if (fault === 'error') return void response.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
      }
      const upstreamRequest = http.request(
        { host: target.hostname, port: target.port, path: request.url, method: request.method, headers: request.headers },
        (upstreamResponse) => {
          response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          let pending = '';
          upstreamResponse.on('data', (chunk: Buffer) => {
            if (record) {
              pending += chunk.toString('utf8');
              const events = pending.split('\n\n');
              pending = events.pop()!;
              for (const event of events) recordEvent(record, event);
            }
            response.write(chunk);
            if (record && fault === 'drop' && record.sentIds.length > 0) {
              record.end = 'drop';
              upstreamRequest.destroy();
              response.socket?.destroy();
            }
          });
          upstreamResponse.on('end', () => response.end());
          upstreamResponse.on('error', () => response.destroy());
        },
      );
      upstreamRequest.on('error', () => response.destroy());
      response.on('close', () => {
        if (!response.writableFinished) {
          if (record && record.end === undefined) record.end = 'disconnect';
          upstreamRequest.destroy();
        }
      });
      upstreamRequest.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served: (requestId: string) => served.get(requestId),
    /** Every request that passed, in order, with its JSON body. */
    requests: () => [...requests],
    setFault: (next: FakeFault) => {
      fault = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** One SSE event of `/v1/completions`: the tokens it carries (`token_id:<id>`) and its finish reason. */
function recordEvent(record: ServedRequest, event: string): void {
  const data = event
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => line.slice(6))
    .join('\n');
  if (data === '' || data === '[DONE]') return;
  const json = JSON.parse(data) as {
    choices?: Array<{ logprobs?: { tokens: string[]; token_logprobs: number[] } | null; finish_reason?: string | null }>;
  };
  for (const choice of json.choices ?? []) {
    record.sentIds.push(...(choice.logprobs?.tokens ?? []).map((token) => Number(token.replace('token_id:', ''))));
    record.sentLogprobs.push(...(choice.logprobs?.token_logprobs ?? []));
    if (choice.finish_reason) record.end = choice.finish_reason as ServedRequest['end'];
  }
}

function parsedBody(body: Buffer): unknown {
  try {
    return body.length > 0 ? JSON.parse(body.toString('utf8')) : undefined;
  } catch {
    return body.toString('utf8');
  }
}
