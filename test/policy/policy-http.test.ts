import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicyUnavailable } from '../../src/policy/policy-errors.js';
import { postForStream } from '../../src/policy/policy-http.js';

let server: http.Server;
let base = '';
const seen: Array<{ headers: http.IncomingHttpHeaders; body: string; port: number }> = [];

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (bytes: Buffer) => (body += bytes.toString()));
    request.on('end', () => {
      seen.push({ headers: request.headers, body, port: request.socket.remotePort! });
      if (request.url === '/stream') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: 1\n\n');
        setTimeout(() => response.end('data: 2\n\n'), 20);
      } else if (request.url === '/moved') {
        response.writeHead(307, { location: '/stream' }).end('moved');
      } else if (request.url === '/hang') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write('data: 1\n\n');
      } else {
        response.writeHead(503).end('{"error": {"message": "overloaded"}}');
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function bodyText(body: AsyncIterable<Uint8Array>): Promise<string[]> {
  const pieces: string[] = [];
  for await (const bytes of body) pieces.push(Buffer.from(bytes).toString());
  return pieces;
}

describe('the token stream’s POST (node:http)', () => {
  it('sends the JSON body with its headers and streams the answer as it comes', async () => {
    const response = await postForStream(`${base}/stream`, { input_ids: [1, 2] }, { authorization: 'Bearer k' });
    expect(response).toMatchObject({ status: 200, ok: true });
    expect((await bodyText(response.body)).join('')).toBe('data: 1\n\ndata: 2\n\n');
    const last = seen.at(-1)!;
    expect(JSON.parse(last.body)).toEqual({ input_ids: [1, 2] });
    expect(last.headers).toMatchObject({ 'content-type': 'application/json', authorization: 'Bearer k', 'content-length': String(last.body.length) });
  });

  it('keeps the connection for the next request once released, and closes it when the caller gives up', async () => {
    const first = await postForStream(`${base}/stream`, {});
    for await (const bytes of first.body) if (Buffer.from(bytes).toString().includes('1')) break;
    first.release();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await postForStream(`${base}/stream`, {});
    for await (const bytes of second.body) if (Buffer.from(bytes).toString().includes('1')) break;
    second.close();
    const third = await postForStream(`${base}/stream`, {});
    await bodyText(third.body);
    const [a, b, c] = seen.slice(-3).map((request) => request.port);
    expect(b).toBe(a);
    expect(c).not.toBe(b);
  });

  it('gives a failed answer’s status and text, and follows no redirect', async () => {
    const failed = await postForStream(`${base}/fail`, {});
    expect(failed).toMatchObject({ status: 503, ok: false });
    expect(await failed.text()).toContain('overloaded');
    const moved = await postForStream(`${base}/moved`, {});
    expect(moved).toMatchObject({ status: 307, ok: false });
    expect(await moved.text()).toBe('moved');
  });

  it('fails as PolicyUnavailable where nothing listens or the URL is no http(s) one', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(postForStream(`http://127.0.0.1:${port}/generate`, {})).rejects.toThrow(PolicyUnavailable);
    await expect(postForStream(`http://127.0.0.1:${port}/generate`, {})).rejects.toThrow(/ECONNREFUSED/);
    await expect(postForStream('ftp://host/generate', {})).rejects.toThrow(PolicyUnavailable);
    await expect(postForStream('not a url', {})).rejects.toThrow(PolicyUnavailable);
  });

  it("throws the signal's reason when it aborts, before the answer or while its body streams", async () => {
    await expect(postForStream(`${base}/stream`, {}, {}, AbortSignal.abort(new Error('gave up early')))).rejects.toThrow('gave up early');
    const controller = new AbortController();
    const response = await postForStream(`${base}/hang`, {}, {}, controller.signal);
    const reading = bodyText(response.body);
    setTimeout(() => controller.abort(new Error('gave up')), 20);
    await expect(reading).rejects.toThrow();
    expect(controller.signal.aborted).toBe(true);
  });
});
