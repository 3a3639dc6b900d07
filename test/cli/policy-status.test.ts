import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordLoaded, recordLoadRequested, recordServing, recordVerdict } from '../../src/store/write/served-weights.js';
import { startTestDatabase, type TestDatabase } from '../store/test-database.js';
import { runCli } from './run-cli.js';

// `ratchet policy publish --reference` and `ratchet policy status` (issue 33), the built CLI against a Postgres.
let db: TestDatabase;
let dir: string;

beforeAll(async () => {
  db = await startTestDatabase();
  dir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-policy-cli-'));
});
afterAll(async () => {
  await db?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe('ratchet policy', () => {
  it('publishes a version with its probe reference, and refuses a malformed one naming the field, publishing nothing', async () => {
    const good = path.join(dir, 'reference.json');
    await writeFile(good, JSON.stringify({ token_ids: [1, 2, 3, 4, 5, 6, 7, 8], logprobs: [null, -1, -2, -3, -4, -5, -6, -7] }));
    const bad = path.join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ token_ids: [1, 2, 3, 4, 5, 6, 7, 8], logprobs: [null, -1] }));
    const refused = await runCli(['policy', 'publish', '--version', '1', '--weights', '/w/1', '--reference', bad], { DATABASE_URL: db.url });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/invalid probe reference: .*differ in length/);
    const unreadable = await runCli(['policy', 'publish', '--version', '1', '--reference', path.join(dir, 'none.json')], { DATABASE_URL: db.url });
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain('none.json');
    const published = await runCli(['policy', 'publish', '--version', '1', '--weights', '/w/1', '--reference', good], { DATABASE_URL: db.url });
    expect(published.code, published.stderr).toBe(0);
    expect(published.stdout).toContain('published policy version 1 (/w/1) with a probe reference');
    const { rows } = await db.pool.query('SELECT probe_reference FROM policy_versions WHERE version = 1');
    expect(rows[0].probe_reference.token_ids).toHaveLength(8);
  });

  it("says which version each server serves and every load's verdict with its probe figures", async () => {
    await recordLoadRequested(db.pool, 'http://gpu-a:8000', 1);
    await recordLoaded(db.pool, 'http://gpu-a:8000', 1);
    await recordVerdict(db.pool, 'http://gpu-a:8000', 1, 'refused', {
      figures: { tokens: 47, meanAbsDelta: 0.5, maxAbsDelta: 1.5 },
      errorType: 'WeightsMismatch',
      error: 'off',
    });
    await recordServing(db.pool, 'http://gpu-a:8000', 0, 'version 1 refused; back on 0');
    const text = await runCli(['policy', 'status'], { DATABASE_URL: db.url });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/http:\/\/gpu-a:8000 {2}v0 {2}since .* \(version 1 refused; back on 0\)/);
    expect(text.stdout).toMatch(/v1 {2}http:\/\/gpu-a:8000 {2}refused .*Δ 0\.5000 \/ 1\.5000 over 47 tokens {2}WeightsMismatch: off/);
    const json = JSON.parse((await runCli(['policy', 'status', '--json'], { DATABASE_URL: db.url })).stdout);
    expect(json.servers[0]).toMatchObject({ server: 'http://gpu-a:8000', version: 0 });
    expect(json.ledger[0]).toMatchObject({ version: 1, verdict: 'refused', errorType: 'WeightsMismatch', meanAbsDelta: 0.5 });
  });
});
