import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { devBanner } from '../../src/cli/dev-banner.js';
import { runCli } from './run-cli.js';

// Every character that splits a URL in the wrong place, in one password.
const PASSWORD = 's3cr/et@x:y?z%q#w';
const ENCODED = encodeURIComponent(PASSWORD);
const urls = {
  raw: `postgres://ratchet:${PASSWORD}@127.0.0.1:1/ratchet`,
  encoded: `postgres://ratchet:${ENCODED}@127.0.0.1:1/ratchet`,
  query: `postgres://ratchet@127.0.0.1:1/ratchet?password=${ENCODED}`,
  keyValue: `host=127.0.0.1 port=1 dbname=ratchet user=ratchet password='${PASSWORD}'`,
};

/** Every command that prints or logs a URL or an error, and what it needs to get as far as using the URL. */
const commands: [string, string[]][] = [
  ['export', ['export']],
  ['monitor', ['monitor']],
  ['consume', ['consume', '--run', 'r1', '--batch-size', '1', '--wait', '0']],
  ['ack', ['ack', '00000000-0000-4000-8000-000000000000']],
  ['runs status', ['runs', 'status', 'r1']],
  ['policy publish', ['policy', 'publish', '--version', '1']],
  ['policy current', ['policy', 'current']],
  ['worker cpu', ['worker', 'cpu']],
  ['worker gpu', ['worker', 'gpu']],
  ['submit', ['submit', '--run', 'r1', '--dataset', 'data/sample.jsonl', '--batch-size', '1']],
  ['controller', ['controller']],
];

let stateDir: string;
beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-secrets-'));
});
afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

function expectHidden(text: string): void {
  expect(text).not.toContain(PASSWORD);
  expect(text).not.toContain(ENCODED);
  expect(text).not.toContain('s3cr/et');
}

describe('no command prints the database password', () => {
  const forms = Object.entries(urls);
  for (const [index, [name, args]] of commands.entries()) {
    // Each command with one form in turn (every form reaches several commands); export with all of them.
    const tried = name === 'export' ? forms : [forms[index % forms.length]!];
    for (const [form, url] of tried) {
      it(`${name} with the password ${form}`, async () => {
        const result = await runCli(args, {
          RATCHET_STATE_DIR: stateDir,
          DATABASE_URL: url,
          TEMPORAL_ADDRESS: '127.0.0.1:1',
          RATCHET_POLICY_URL: `http://user:${ENCODED}@127.0.0.1:1`,
          RATCHET_POLICY_API_KEY: `${PASSWORD}-key`,
        });
        expect(result.code).not.toBe(0);
        expect(result.stderr).toMatch(/^ratchet: /m);
        expectHidden(result.stdout + result.stderr);
      });
    }
  }
});

describe('ratchet dev', () => {
  it('prints an external DATABASE_URL and a policy URL without their passwords', () => {
    const banner = devBanner(
      {
        temporalAddress: '127.0.0.1:7233',
        temporalUiUrl: 'http://127.0.0.1:8233',
        databaseUrl: urls.raw,
        embeddedPostgres: false,
        policyUrl: `http://user:${ENCODED}@gpu.example:30000`,
        simulated: false,
      },
      'data/sample.jsonl',
      '.ratchet',
    );
    expectHidden(banner);
    expect(banner).toContain('postgres://ratchet:***@127.0.0.1:1/ratchet');
    expect(banner).toContain('http://user:***@gpu.example:30000');
  });
});
