import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { recordLoaded, recordLoadRequested, recordServing, recordVerdict } from '../../src/store/write/served-weights.js';
import { uiApp } from '../../src/ui/app.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { storeAffinityRuns } from '../store/run-rows.js';

// "Which weights is each server serving now?" (issue 33) on the run page and /api/weights, from the ledger GPU
// workers write (src/processes/policy-version-watcher.ts), over a Postgres alone.
let db: TestDatabase;
let app: ReturnType<typeof uiApp>;

beforeAll(async () => {
  db = await startTestDatabase();
  await storeAffinityRuns(db.pool);
  for (const server of ['http://gpu-a:8000', 'http://gpu-b:8000']) {
    await recordLoadRequested(db.pool, server, 1);
    await recordLoaded(db.pool, server, 1);
    await recordVerdict(db.pool, server, 1, 'proven', { figures: { tokens: 47, meanAbsDelta: 0.0012, maxAbsDelta: 0.0052 } });
    await recordServing(db.pool, server, 1);
  }
  await recordLoadRequested(db.pool, 'http://gpu-b:8000', 2);
  await recordLoaded(db.pool, 'http://gpu-b:8000', 2);
  await recordVerdict(db.pool, 'http://gpu-b:8000', 2, 'refused', {
    figures: { tokens: 47, meanAbsDelta: 0.2413, maxAbsDelta: 0.6116 },
    errorType: 'WeightsMismatch',
    error: "served logprobs differ from the published weights'",
  });
  await recordServing(db.pool, 'http://gpu-b:8000', 1, 'version 2 refused; back on 1');
  app = uiApp({ pool: db.pool, tokenizer: await loadModelTokenizer(), assets: new Map() });
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

describe('served weights', () => {
  it('says on the run page which version each server serves, and shows a refusal open with its figures and error', async () => {
    const page = await (await app.request('/runs/affinity')).text();
    const section = page.slice(page.indexOf('id="served-weights"'), page.indexOf('</details>', page.indexOf('id="served-weights"')));
    expect(section).toContain(' open');
    expect(section).toMatch(/http:\/\/gpu-a:8000 v1/);
    expect(section).toMatch(/http:\/\/gpu-b:8000 v1/);
    expect(section).toMatch(/<td>2<\/td><td>http:\/\/gpu-b:8000<\/td><td>refused<\/td>/);
    expect(section).toContain('0.2413 / 0.6116 (47 tokens)');
    expect(section).toContain('WeightsMismatch: served logprobs differ');
    expect(section).toContain('0.0012 / 0.0052');
  });

  it('answers the same as JSON', async () => {
    const body = (await (await app.request('/api/weights')).json()) as {
      servers: { server: string; version: number }[];
      ledger: { version: number; verdict: string }[];
    };
    expect(body.servers.map((server) => [server.server, server.version])).toEqual([
      ['http://gpu-a:8000', 1],
      ['http://gpu-b:8000', 1],
    ]);
    expect(body.ledger.map((row) => `${row.version}:${row.verdict}`)).toEqual(['2:refused', '1:proven', '1:proven']);
  });

  it('marks a server that serves no vouched version', async () => {
    await recordServing(db.pool, 'http://gpu-b:8000', null, 'could not be put back');
    const page = await (await app.request('/runs/affinity')).text();
    expect(page).toMatch(/<span class="flag">http:\/\/gpu-b:8000 serves no vouched version<\/span>/);
  });
});
