import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

// Static checks of the compose file's secrets, healthchecks and pins (no Docker engine needed), and a real run
// of the script that makes the secrets.
const root = fileURLToPath(new URL('../../', import.meta.url));
const composeText = await readFile(path.join(root, 'docker-compose.yml'), 'utf8');

interface Service {
  image?: string;
  build?: unknown;
  restart?: string;
  entrypoint?: string[];
  environment?: Record<string, string>;
  secrets?: string[];
  volumes?: string[];
  healthcheck?: { test: string[] };
}
const compose = parse(composeText, { merge: true }) as { services: Record<string, Service>; secrets: Record<string, { file: string }> };
const services = compose.services;
const longRunning = Object.entries(services).filter(([, service]) => service.restart === 'unless-stopped');

describe('compose secrets', () => {
  it('passes no password or key as a literal (or a defaulted variable) in any environment', () => {
    for (const [name, { environment }] of Object.entries(services)) {
      for (const [key, value] of Object.entries(environment ?? {})) {
        if (/PASSWORD|PWD|API_KEY|SECRET/.test(key)) expect(key, `${name}: ${key}=${value}`).toMatch(/_FILE$/);
        if (/^postgres(ql)?:/.test(String(value))) expect(new URL(String(value)).password, `${name}: ${key}`).toBe('');
      }
    }
    expect(composeText).not.toMatch(/\$\{\w*(PASSWORD|PWD|API_KEY)\w*:-/);
  });

  it('reads every *_FILE from a secret the service mounts, and every secret from deploy/secrets', () => {
    for (const [name, { environment, secrets }] of Object.entries(services)) {
      for (const [key, value] of Object.entries(environment ?? {})) {
        if (!key.endsWith('_FILE')) continue;
        const secret = /^\/run\/secrets\/(\w+)$/.exec(value)?.[1];
        expect(secret, `${name}: ${key}`).toBeDefined();
        expect(secrets, `${name} mounts no ${secret}`).toContain(secret);
      }
    }
    for (const [name, { file }] of Object.entries(compose.secrets)) expect(file).toBe(`./deploy/secrets/${name}`);
  });

  it('gives the GPU worker the key SGLang is started with', () => {
    expect(services['sglang']!.secrets).toContain('policy_api_key');
    expect(services['sglang']!.entrypoint).toEqual(['/bin/sh', '/deploy/serve-with-api-key.sh']);
    expect(services['ratchet-gpu-worker']!.environment!['RATCHET_POLICY_API_KEY_FILE']).toBe('/run/secrets/policy_api_key');
    expect(services['ratchet-gpu-worker']!.secrets).toContain('policy_api_key');
  });

  it('reads passwords in the mounted scripts from /run/secrets', async () => {
    for (const script of [
      'deploy/postgres/initdb/01-databases.sh',
      'deploy/temporal/setup-schema.sh',
      'deploy/temporal/with-db-password.sh',
      'deploy/policy/serve-with-api-key.sh',
    ]) {
      expect(await readFile(path.join(root, script), 'utf8'), script).toMatch(/\$\(cat \/run\/secrets\/\w+\)/);
    }
  });
});

describe('deploy/secrets/generate.sh', () => {
  let folder: string;
  beforeAll(async () => {
    folder = await mkdtemp(path.join(os.tmpdir(), 'ratchet-secrets-'));
    await cp(path.join(root, 'deploy/secrets/generate.sh'), path.join(folder, 'generate.sh'));
  });
  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  it('makes every secret compose names, random, URL-safe, in a folder only its owner can enter, and keeps them on a rerun', async () => {
    await promisify(execFile)('sh', [path.join(folder, 'generate.sh')]);
    const made = Object.fromEntries(
      await Promise.all(Object.keys(compose.secrets).map(async (name) => [name, await readFile(path.join(folder, name), 'utf8')] as const)),
    );
    for (const value of Object.values(made)) expect(value).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(Object.values(made)).size).toBe(Object.keys(made).length);
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    await promisify(execFile)('sh', [path.join(folder, 'generate.sh')]);
    for (const [name, value] of Object.entries(made)) expect(await readFile(path.join(folder, name), 'utf8')).toBe(value);
  });

  it('is ignored by git, all but the script', async () => {
    const ignore = await readFile(path.join(root, 'deploy/secrets/.gitignore'), 'utf8');
    expect(ignore.split('\n')).toEqual(expect.arrayContaining(['*', '!generate.sh', '!.gitignore']));
    expect(
      (await readdir(path.join(root, 'deploy/secrets'))).filter(
        (file) => !['generate.sh', '.gitignore'].includes(file) && !(file in compose.secrets),
      ),
    ).toEqual([]);
  });
});

describe('compose healthchecks and pins', () => {
  it('health-checks every long-running service: workers, controller, UI, servers', () => {
    expect(longRunning.map(([name]) => name)).toEqual(
      expect.arrayContaining(['ratchet-cpu-worker', 'ratchet-gpu-worker', 'ratchet-controller', 'temporal-ui', 'temporal', 'postgres', 'sglang']),
    );
    for (const [name, { healthcheck }] of longRunning) expect(healthcheck?.test, name).toBeDefined();
  });

  it('checks Ratchet processes with `ratchet health`, the GPU worker with its policy server too', () => {
    for (const name of ['ratchet-cpu-worker', 'ratchet-controller'])
      expect(services[name]!.healthcheck!.test).toEqual(['CMD', 'node', 'dist/cli/main.js', 'health']);
    expect(services['ratchet-gpu-worker']!.healthcheck!.test).toEqual(['CMD', 'node', 'dist/cli/main.js', 'health', '--policy']);
  });

  it('pins every pulled image to an exact version', () => {
    for (const [name, { image, build }] of Object.entries(services)) {
      if (build) continue;
      expect(image, name).toMatch(/:v?\d+\.\d+(\.\d+)?(-[\w.]+)?$|@sha256:[0-9a-f]{64}$/);
    }
  });
});
