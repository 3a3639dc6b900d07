import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { uiApp } from '../../src/ui/app.js';
import { conversationText } from '../../src/ui/conversation-text.js';
import { loadTrajectoryDetails } from '../../src/ui/trajectory-details.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { storeAffinityRuns } from '../store/run-rows.js';

// The run page's turn-affinity and prefix-cache shares (issue 27) and each turn's server, over a Postgres alone
// (test/store/run-rows.ts storeAffinityRuns: 2 of 3 later turns on their previous server, 9 of 12 later context
// tokens cached, 9 of 14 over all turns), through the UI's routes without a browser.
let db: TestDatabase;
let app: ReturnType<typeof uiApp>;

beforeAll(async () => {
  db = await startTestDatabase();
  await storeAffinityRuns(db.pool);
  app = uiApp({ pool: db.pool, tokenizer: await loadModelTokenizer(), assets: new Map() });
}, 60_000);

afterAll(async () => {
  await db?.stop();
});

describe('the run page', () => {
  it('shows the share of turns on their previous server and the prefix-cache hit rate, labelled, with what they mean', async () => {
    const response = await app.request('/runs/affinity');
    expect(response.status).toBe(200);
    const page = await response.text();
    const section = page.slice(page.indexOf('id="turn-servers"'), page.indexOf('id="failed-by-type"'));
    expect(section).toMatch(/turns on previous server<b data-server-share="onPreviousServerShare">66\.7%<\/b>/);
    expect(section).toMatch(/prefix-cache hit rate \(turns ≥ 2\)<b data-server-share="laterPrefixCacheHitRate">75\.0%<\/b>/);
    // The tooltips say what each is a share of, with the counts behind it and the rate over all turns.
    expect(section).toContain('2 of 3 turns.');
    expect(section).toContain('Over all turns: 64.3% (3 turns reported).');
    expect(section).toContain('same inference server as the turn before');
  });

  it('shows – before any turn counts toward a share', async () => {
    const page = await (await app.request('/runs/solo')).text();
    expect(page).toContain('<b data-server-share="onPreviousServerShare">–</b>');
    expect(page).toContain('<b data-server-share="laterPrefixCacheHitRate">–</b>');
  });

  it("gives the shares to the page's poll, with the counts behind them", async () => {
    const view = (await (await app.request('/api/runs/affinity')).json()) as { servers: Record<string, number | null> };
    expect(view.servers).toMatchObject({ laterTurns: 3, onPreviousServer: 2, cacheReportedTurns: 3 });
    expect(view.servers.onPreviousServerShare).toBeCloseTo(2 / 3);
    expect(view.servers.laterPrefixCacheHitRate).toBeCloseTo(0.75);
    expect(view.servers.prefixCacheHitRate).toBeCloseTo(9 / 14);
  });
});

describe("a trajectory's turns", () => {
  it('name the server that generated each and the prefix-cache tokens it reported, on the page and in `ratchet show`', async () => {
    const page = await (await app.request(`/trajectories/${encodeURIComponent('affinity/q1/0')}`)).text();
    const turns = [...page.matchAll(/<span class="served-by">([^<]*)<\/span> · cached <span class="cached-tokens"[^>]*>([^<]*)<\/span>/g)].map(
      (m) => [m[1], m[2]],
    );
    expect(turns).toEqual([
      ['ratchet-gpu@A', '0'],
      ['ratchet-gpu@A', '3'],
      ['ratchet-gpu@B', '–'],
    ]);
    const text = conversationText(await loadTrajectoryDetails(db.pool, await loadModelTokenizer(), undefined, 'affinity/q1/0'));
    expect(text).toContain('· server ratchet-gpu@A · cached 3 of 6');
    expect(text).toContain('· server ratchet-gpu@B · cached – of 10');
  });

  it('say nothing of servers for turns stored before they were kept', async () => {
    const page = await (await app.request(`/trajectories/${encodeURIComponent('affinity/q3/0')}`)).text();
    expect(page).not.toContain('class="served-by"');
  });
});
