import http from 'node:http';

/**
 * An HTTP gate in front of a fake inference server that checks `Authorization` the way SGLang's and vLLM's
 * `--api-key` middleware does (401 `{"error": "Unauthorized"}`) and records what every request carried.
 */
export async function startApiKeyGate(target: string, expected: string) {
  const seen: { path: string; authorization: string | undefined }[] = [];
  const server = http.createServer((request, response) => {
    seen.push({ path: request.url ?? '', authorization: request.headers.authorization });
    if (request.headers.authorization !== expected) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'Unauthorized' }));
      return;
    }
    const upstream = http.request(`${target}${request.url}`, { method: request.method, headers: request.headers }, (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    });
    upstream.on('error', () => response.destroy());
    response.on('close', () => upstream.destroy());
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
