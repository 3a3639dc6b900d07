import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Script } from 'node:vm';
import { format } from 'prettier';
import { describe, expect, it } from 'vitest';

// Code in other languages lives in files of its own, beside the TypeScript that loads it, so that its own tools
// check it: the sandbox's Python by ruff and mypy --strict, the UI's browser script and stylesheet by their parsers.
// `npm run build` copies each into dist/ (package.json "build"), where the built CLI and workers read it.
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const PYTHON_SOURCES = ['src/code/launcher.py', 'src/code/floor_confinement.py'];
const BROWSER_SCRIPT = 'src/ui/browser/ratchet-ui.js';
const STYLESHEET = 'src/ui/browser/ui-style.css';
const LINT_LOCK = path.join(root, 'scripts/dev/python-lint/requirements.lock');

/** A virtualenv in .ratchet/python-lint with ruff and mypy from their hashed lockfile; remade when the lock changes. */
async function pythonLintEnv(): Promise<string> {
  const dir = path.join(root, '.ratchet', 'python-lint');
  const python = path.join(dir, 'bin', 'python');
  const marker = path.join(dir, 'requirements.lock.sha256');
  const hash = createHash('sha256')
    .update(await readFile(LINT_LOCK))
    .digest('hex');
  if (existsSync(python) && (await readFile(marker, 'utf8').catch(() => '')) === hash) return python;
  await rm(dir, { recursive: true, force: true });
  await run(process.env.PYTHON ?? 'python3', ['-m', 'venv', dir], { timeout: 120_000 });
  await run(
    python,
    ['-m', 'pip', '--disable-pip-version-check', '--quiet', 'install', '--require-hashes', '--no-deps', '--only-binary', ':all:', '-r', LINT_LOCK],
    { timeout: 600_000 },
  );
  await writeFile(marker, hash);
  return python;
}

async function checked(command: Promise<{ stdout: string; stderr: string }>): Promise<string> {
  return command.then(
    ({ stdout, stderr }) => `${stdout}${stderr}`,
    (error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`${error.message}\n${error.stdout ?? ''}${error.stderr ?? ''}`);
    },
  );
}

describe('code in other languages, in files of its own', () => {
  it('the sandbox launcher passes ruff and mypy --strict', async () => {
    const python = await pythonLintEnv();
    const ruff = path.join(path.dirname(python), 'ruff');
    expect(await checked(run(ruff, ['check', '--no-cache', ...PYTHON_SOURCES], { cwd: root }))).toContain('All checks passed');
    const cache = await mkdtemp(path.join(os.tmpdir(), 'ratchet-mypy-'));
    try {
      const args = ['-m', 'mypy', '--strict', '--python-version', '3.10', '--cache-dir', cache, ...PYTHON_SOURCES];
      expect(await checked(run(python, args, { cwd: root, timeout: 300_000 }))).toContain('Success');
    } finally {
      await rm(cache, { recursive: true, force: true });
    }
  }, 900_000);

  it('the browser script and the stylesheet parse', async () => {
    const script = await readFile(path.join(root, BROWSER_SCRIPT), 'utf8');
    expect(() => new Script(script, { filename: BROWSER_SCRIPT })).not.toThrow();
    const style = await readFile(path.join(root, STYLESHEET), 'utf8');
    await expect(format(style, { parser: 'css' })).resolves.toContain('body');
    await expect(format('body{color:red', { parser: 'css' })).rejects.toThrow();
  });

  it('is shipped: `npm run build` copied each file into dist/ unchanged', async () => {
    for (const file of [...PYTHON_SOURCES, BROWSER_SCRIPT, STYLESHEET]) {
      const built = path.join(root, 'dist', path.relative(path.join(root, 'src'), path.join(root, file)));
      expect(await readFile(built, 'utf8'), built).toBe(await readFile(path.join(root, file), 'utf8'));
    }
  });
});
