import { createServer } from 'node:net';
import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { InvalidConfiguration, loadConfig } from '../../src/config.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startAgentHost } from '../../src/workers/agent-host.js';

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("the agent endpoint's address (RATCHET_AGENT_LISTEN, RATCHET_AGENT_URL)", () => {
  it('listens where it is told and hands agents the URL they reach it at', async () => {
    const port = await freePort();
    const config = loadConfig({ RATCHET_AGENT_LISTEN: `127.0.0.1:${port}`, RATCHET_AGENT_URL: 'http://agents.internal:9000/' });
    expect(config.agentEndpoint).toEqual({ hostname: '127.0.0.1', port, url: 'http://agents.internal:9000/' });

    // Nothing here reaches Postgres or Temporal: only a call would.
    const host = await startAgentHost({
      programs: [],
      pool: {} as pg.Pool,
      client: {} as Client,
      tokenizer: await loadModelTokenizer(),
      ...config.agentEndpoint,
    });
    try {
      const terms = { policy: 'policy-v1', attempt: 1, sampling: { temperature: 1, topP: 1, topK: -1, minP: 0 }, maxNewTokens: 64 };
      const { baseUrl, apiKey } = host.openRun('t/1', terms as never);
      expect(baseUrl).toBe('http://agents.internal:9000/v1/trajectories/t%2F1');
      // The same path on the address it listens at answers with that run's key, and refuses another.
      const local = `http://127.0.0.1:${port}${new URL(baseUrl).pathname}/models`;
      const listed = await fetch(local, { headers: { authorization: `Bearer ${apiKey}` } });
      expect(listed.status).toBe(200);
      expect(await listed.json()).toMatchObject({ data: [{ id: 'policy-v1' }] });
      expect((await fetch(local, { headers: { authorization: 'Bearer nope' } })).status).toBe(401);
    } finally {
      await host.close();
    }
  });

  it('refuses an address that is not host:port, naming the variable', () => {
    expect(() => loadConfig({ RATCHET_AGENT_LISTEN: '0.0.0.0' })).toThrow(InvalidConfiguration);
    expect(() => loadConfig({ RATCHET_AGENT_LISTEN: '0.0.0.0' })).toThrow(/RATCHET_AGENT_LISTEN: expected host:port/);
    expect(loadConfig({ RATCHET_AGENT_LISTEN: '[::1]:8700' }).agentEndpoint).toEqual({ hostname: '::1', port: 8700, url: undefined });
    expect(loadConfig({}).agentEndpoint).toEqual({ url: undefined });
  });
});
