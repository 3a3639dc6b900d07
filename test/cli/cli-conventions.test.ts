import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { failIfAnyFailed } from '../../src/cli/run-command.js';
import type { RunSummary } from '../../src/cli/run-summary.js';
import { runCli } from './run-cli.js';

let stateDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  stateDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-cli-'));
  // A closed port: any command that got as far as connecting would fail, not start an embedded server.
  env = { RATCHET_STATE_DIR: stateDir, DATABASE_URL: 'postgres://ratchet@127.0.0.1:1/ratchet', TEMPORAL_ADDRESS: '127.0.0.1:1' };
});
afterAll(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

describe('ratchet conventions', () => {
  it('prints the package version with --version', async () => {
    const { version } = JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const result = await runCli(['--version'], env);
    expect(result).toMatchObject({ code: 0, stdout: `${version}\n` });
  });

  it('answers --help in well under a second, listing every command without loading them', async () => {
    const runs = [];
    for (let i = 0; i < 3; i++) runs.push(await runCli(['--help'], env));
    expect(runs[0]!.code).toBe(0);
    for (const name of ['run', 'export', 'consume', 'worker', 'dev', 'policy', 'verify'])
      expect(runs[0]!.stdout).toMatch(new RegExp(`^  ${name} `, 'm'));
    expect(Math.min(...runs.map((run) => run.ms))).toBeLessThan(1_000);
  });

  it("shows a command's own options with <command> --help", async () => {
    const result = await runCli(['consume', '--help'], env);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('--batch-size <groups>');
  });

  it.each([
    ['an unknown command', ['bogus'], /unknown command 'bogus'/],
    ['an invalid choice', ['export', '--format', 'xml'], /--format <format>' argument 'xml' is invalid/],
    ['a missing required option', ['consume', '--run', 'r1'], /required option '--batch-size <groups>' not specified/],
    ['a binary format without --out', ['export', '--format', 'arrow'], /--format arrow needs --out/],
    ['--poll-ms abc', ['controller', '--poll-ms', 'abc'], /--poll-ms <ms>' argument 'abc' is invalid/],
    // A subcommand's own --version is not the program's.
    ['policy publish --version abc', ['policy', 'publish', '--version', 'abc'], /--version must be a non-negative integer/],
  ])('exits 2 for %s', async (_what, args, message) => {
    const result = await runCli(args, env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it.each([
    ['LOG_LEVEL', 'verbose'],
    ['RATCHET_GPU_SLOTS', '0'],
    ['RATCHET_POLICY_BACKEND', 'tgi'],
  ])('rejects %s=%s naming the variable, with exit 2', async (name, value) => {
    const result = await runCli(['export'], { ...env, [name]: value });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(name);
    expect(result.stderr).toContain(`"${value}"`);
  });

  it('exits 1 for a failure, with the reason on stderr', async () => {
    const result = await runCli(['policy', 'current'], env);
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^ratchet: cannot reach Postgres at postgres:\/\/ratchet@127\.0\.0\.1:1\/ratchet/);
  });

  it('reports a binary dataset once, with a count, not one line per line of bytes', async () => {
    const file = path.join(stateDir, 'model.bin');
    await writeFile(file, Buffer.from(Array.from({ length: 64 * 1024 }, (_, i) => (i * 7919 + 13) % 256)));
    const result = await runCli(['run', '--submit-only', '--dataset', file], env);
    expect(result.code).toBe(1);
    const lines = result.stderr.trim().split('\n');
    expect(lines.filter((line) => line.includes('not UTF-8'))).toHaveLength(1);
    expect(lines.length).toBeLessThanOrEqual(8);
    expect(result.stderr).toMatch(/skipped \d+ lines of .*model\.bin that are not UTF-8 text/);
    expect(result.stderr).toMatch(/no usable rows/);
  });
});

describe('ratchet run with failed trajectories', () => {
  it('exits 1 and says how many failed', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const before = process.exitCode;
    try {
      failIfAnyFailed({ trajectories: 5, completed: 5, failed: 0 } as RunSummary);
      expect(process.exitCode).toBe(before);
      failIfAnyFailed({ trajectories: 5, completed: 3, failed: 2 } as RunSummary);
      expect(process.exitCode).toBe(1);
      expect(write).toHaveBeenCalledWith('ratchet: 2 of 5 trajectories failed\n');
    } finally {
      process.exitCode = before;
      write.mockRestore();
    }
  });
});
