import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend, type BackendKind } from '../../src/policy/backend-config.js';
import { PolicyRejectedRequest } from '../../src/policy/policy-errors.js';
import { scrubSecrets } from '../../src/secrets/known-secrets.js';
import { startApiKeyGate } from './fakes/api-key-gate.js';
import { startFakeSglang } from './fakes/fake-sglang.js';
import { startFakeVllm } from './fakes/fake-vllm.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

const KEY = 'sk-ratchet/a@b:c?d%e#f';
const PROMPT = [151644, 872, 198, 3838, 374, 220, 21, 151645];

const fakes: Record<BackendKind, () => Promise<{ url: string; close(): Promise<void> }>> = { sglang: startFakeSglang, vllm: startFakeVllm };

for (const kind of ['sglang', 'vllm'] as const) {
  describe(`${kind} backend with RATCHET_POLICY_API_KEY`, () => {
    let fake: { url: string; close(): Promise<void> };
    let gate: Awaited<ReturnType<typeof startApiKeyGate>>;
    beforeAll(async () => {
      fake = await fakes[kind]();
      gate = await startApiKeyGate(fake.url, `Bearer ${KEY}`);
    });
    afterAll(async () => {
      await gate?.close();
      await fake?.close();
    });

    it('sends the key as a bearer token on every request', async () => {
      const backend = createBackend(kind, gate.url, KEY);
      const tokens: number[] = [];
      await backend.generate({ inputIds: PROMPT, maxNewTokens: 8, sampling: DEFAULT_SAMPLING, requestId: `${kind}-auth` }, (chunk) =>
        tokens.push(...chunk.ids),
      );
      expect(tokens.length).toBeGreaterThan(0);
      expect(await backend.contextWindow()).toBeGreaterThan(0);
      expect(await backend.health()).toBe(true);
      await backend.updateWeights(2, '/checkpoints/step-2');
      await backend.abort(`${kind}-auth`);
      expect(gate.seen.length).toBeGreaterThanOrEqual(4);
      expect(gate.seen.filter((request) => request.authorization !== `Bearer ${KEY}`)).toEqual([]);
    });

    it('fails a wrong key as a rejected request whose message and fields do not show the key', async () => {
      const wrong = `${KEY}-wrong`;
      const failure = await createBackend(kind, gate.url, wrong)
        .generate({ inputIds: PROMPT, maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: `${kind}-wrong` }, () => undefined)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(PolicyRejectedRequest);
      expect((failure as PolicyRejectedRequest).status).toBe(401);
      const shown = `${String(failure)} ${JSON.stringify(failure)} ${(failure as Error).stack}`;
      expect(shown).not.toContain(KEY);
      expect(scrubSecrets(`key was ${wrong}`)).not.toContain(KEY);
    });

    it('turns user:password in the server URL into Basic auth and never shows the password', async () => {
      const password = 'pa/ss@w:o?r%d#';
      const basic = `Basic ${Buffer.from(`proxy:${password}`).toString('base64')}`;
      const basicGate = await startApiKeyGate(fake.url, basic);
      try {
        const backend = createBackend(kind, `http://proxy:${encodeURIComponent(password)}@127.0.0.1:${basicGate.port}/`);
        expect(backend.url).toBe(basicGate.url);
        expect(await backend.contextWindow()).toBeGreaterThan(0);
        expect(basicGate.seen.every((request) => request.authorization === basic)).toBe(true);
        await basicGate.close();
        const failure = await backend
          .generate({ inputIds: PROMPT, maxNewTokens: 4, sampling: DEFAULT_SAMPLING, requestId: `${kind}-down` }, () => undefined)
          .catch((error: unknown) => error);
        expect(String(failure)).toContain('unavailable');
        expect(`${String(failure)} ${JSON.stringify(failure)}`).not.toContain(password);
        expect(`${String(failure)}`).not.toContain(encodeURIComponent(password));
      } finally {
        await basicGate.close().catch(() => undefined);
      }
    });
  });
}
