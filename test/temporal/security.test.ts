import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporalSecurity } from '../../src/temporal/security.js';
import { loadConfig } from '../../src/config.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-tls-'));
  await Promise.all(
    [
      ['ca.pem', 'CA'],
      ['client.pem', 'CERT'],
      ['client.key', 'KEY'],
      ['api-key', 'key-from-file\n'],
    ].map(([name, text]) => writeFile(path.join(dir, name!), text!)),
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** No config file: the user's own temporal.toml must not leak into the test. */
const base = { TEMPORAL_CONFIG_FILE: '/nonexistent/temporal.toml' };
const security = (env: Record<string, string>) => temporalSecurity(loadConfig({ ...base, ...env }).temporal, { ...base, ...env });

describe('Temporal connection security from the environment', () => {
  it('is plain without TLS settings (the embedded dev server)', () => {
    expect(security({})).toEqual({});
  });

  it('turns TLS on for an API key, read from a file too (Temporal Cloud)', () => {
    expect(security({ TEMPORAL_API_KEY: 'k1' })).toEqual({ apiKey: 'k1', tls: true });
    expect(security({ TEMPORAL_API_KEY_FILE: path.join(dir, 'api-key') })).toMatchObject({ apiKey: 'key-from-file', tls: expect.anything() });
  });

  it('reads mTLS, a custom CA and the server name from TEMPORAL_TLS_*', () => {
    const found = security({
      TEMPORAL_TLS_CLIENT_CERT_PATH: path.join(dir, 'client.pem'),
      TEMPORAL_TLS_CLIENT_KEY_PATH: path.join(dir, 'client.key'),
      TEMPORAL_TLS_SERVER_CA_CERT_PATH: path.join(dir, 'ca.pem'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    expect(found.tls).toMatchObject({ serverNameOverride: 'temporal.internal' });
    const tls = found.tls as { serverRootCACertificate: Uint8Array; clientCertPair: { crt: Uint8Array; key: Uint8Array } };
    expect(Buffer.from(tls.serverRootCACertificate).toString()).toBe('CA');
    expect(Buffer.from(tls.clientCertPair.crt).toString()).toBe('CERT');
    expect(Buffer.from(tls.clientCertPair.key).toString()).toBe('KEY');
  });

  it('turns TLS on with TEMPORAL_TLS alone, and off with TEMPORAL_TLS=false', () => {
    expect(security({ TEMPORAL_TLS: 'true' }).tls).toBeTruthy();
    expect(security({ TEMPORAL_TLS: 'false' }).tls).toBeFalsy();
  });
});
