import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidConfiguration, loadConfig } from '../../src/config.js';
import { scrubSecrets } from '../../src/secrets/known-secrets.js';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-secret-files-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

describe('secrets from files (compose secrets)', () => {
  it("puts DATABASE_PASSWORD_FILE's password into DATABASE_URL, encoded, and masks it from then on", async () => {
    const password = 'p@ss/w%rd#:?';
    await writeFile(path.join(folder, 'db'), `${password}\n`);
    const config = loadConfig({ DATABASE_URL: 'postgres://ratchet@postgres:5432/ratchet', DATABASE_PASSWORD_FILE: path.join(folder, 'db') });
    const url = new URL(config.databaseUrl!);
    expect(decodeURIComponent(url.password)).toBe(password);
    expect(`${url.hostname}${url.pathname}`).toBe('postgres/ratchet');
    expect(scrubSecrets(`failed with ${password}`)).toBe('failed with ***');
  });

  it('reads RATCHET_POLICY_API_KEY_FILE and TEMPORAL_API_KEY_FILE; a value set directly wins', async () => {
    await writeFile(path.join(folder, 'key'), 'sk-from-file\n');
    const config = loadConfig({ RATCHET_POLICY_API_KEY_FILE: path.join(folder, 'key'), TEMPORAL_API_KEY_FILE: path.join(folder, 'key') });
    expect(config.policyApiKey).toBe('sk-from-file');
    expect(config.temporal.apiKey).toBe('sk-from-file');
    expect(loadConfig({ RATCHET_POLICY_API_KEY: 'direct', RATCHET_POLICY_API_KEY_FILE: path.join(folder, 'key') }).policyApiKey).toBe('direct');
  });

  it('names the variable when its file cannot be read', () => {
    const load = () => loadConfig({ RATCHET_POLICY_API_KEY_FILE: path.join(folder, 'missing') });
    expect(load).toThrow(InvalidConfiguration);
    expect(load).toThrow(/RATCHET_POLICY_API_KEY_FILE: cannot read .*missing \(ENOENT\)/);
  });
});
