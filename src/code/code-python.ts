import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { log } from '../logging.js';

const run = promisify(execFile);

/** What code answers may import beyond the standard library (numpy), pinned with hashes; found from src/ or dist/. */
export const CODE_PYTHON_LOCK = path.resolve(import.meta.dirname, '../../scripts/code-python/requirements.lock');
/** The interpreter without numpy, and the base of the virtualenv: the sandbox shows `/usr`, so the base must live there. */
export const SYSTEM_PYTHON = '/usr/bin/python3';

export class CodePythonFailed extends Error {
  override readonly name = 'CodePythonFailed';
}

/** The virtualenv `ratchet setup` makes for code answers, in the state folder; its marker is written last. */
export function codePythonPaths(stateDir: string): { dir: string; python: string; marker: string } {
  const dir = path.join(stateDir, 'code-python');
  return { dir, python: path.join(dir, 'bin', 'python'), marker: path.join(dir, 'requirements.lock.sha256') };
}

/**
 * Makes the code answers' virtualenv: `/usr/bin/python3 -m venv` and the lockfile with `--require-hashes`.
 * A no-op while the lockfile and the base interpreter are unchanged; remade from nothing otherwise. Returns its python.
 */
export async function codePythonEnv(stateDir: string): Promise<string> {
  const { dir, python, marker } = codePythonPaths(stateDir);
  const lock = await readFile(CODE_PYTHON_LOCK);
  const { stdout: base } = await run(SYSTEM_PYTHON, ['-c', 'import sys; print(sys.version)']).catch((error: Error) => {
    throw new CodePythonFailed(`code answers need ${SYSTEM_PYTHON}, which does not run: ${error.message}`, { cause: error });
  });
  const hash = createHash('sha256').update(lock).update(base).digest('hex');
  if (existsSync(python) && (await readFile(marker, 'utf8').catch(() => '')) === hash) return python;
  try {
    await rm(dir, { recursive: true, force: true });
    await run(SYSTEM_PYTHON, ['-m', 'venv', dir], { timeout: 120_000 });
    await run(
      python,
      [
        '-m',
        'pip',
        '--disable-pip-version-check',
        '--quiet',
        'install',
        '--require-hashes',
        '--no-deps',
        '--only-binary',
        ':all:',
        '-r',
        CODE_PYTHON_LOCK,
      ],
      { timeout: 600_000 },
    );
    await run(python, ['-I', '-c', 'import numpy']);
    // Under root each sandbox runs as a uid of its own, which must read the virtualenv whatever the umask.
    await run('chmod', ['-R', 'a+rX', dir]);
  } catch (error) {
    throw new CodePythonFailed(
      `could not make the code answers' virtualenv in ${dir} (${SYSTEM_PYTHON} -m venv, then pip from ${CODE_PYTHON_LOCK}; Debian needs python3-venv): ${(error as Error).message}`,
      { cause: error },
    );
  }
  await writeFile(marker, hash);
  return python;
}

let warned = false;

/**
 * The interpreter for code answers when `RATCHET_CODE_PYTHON` is unset: the virtualenv `ratchet setup` made in
 * the state folder (`RATCHET_STATE_DIR`), else `/usr/bin/python3`, with one warning per process that numpy is
 * unavailable.
 */
export function defaultCodePython(env: NodeJS.ProcessEnv = process.env): string {
  const { dir, python, marker } = codePythonPaths(path.resolve(env.RATCHET_STATE_DIR || '.ratchet'));
  const why =
    !existsSync(python) || !readable(marker) ? `run \`ratchet setup\` to make ${python}, or set RATCHET_CODE_PYTHON` : closedToSandboxes(dir);
  if (why === undefined) return python;
  if (!warned) {
    warned = true;
    log.warn({ component: 'code-sandbox', python }, `code answers run on ${SYSTEM_PYTHON}: numpy is unavailable to them (${why})`);
  }
  return SYSTEM_PYTHON;
}

/** Under root, sandboxes run as uids of their own: a folder above the virtualenv closed to others hides it from them. */
function closedToSandboxes(dir: string): string | undefined {
  if (process.getuid?.() !== 0) return undefined;
  for (let folder = path.dirname(dir); ; folder = path.dirname(folder)) {
    if ((statSync(folder).mode & 0o001) === 0)
      return `${folder} is closed to other users, and each sandbox runs as a uid of its own: make it o+x or set RATCHET_CODE_PYTHON`;
    if (folder === path.dirname(folder)) return undefined;
  }
}

function readable(file: string): boolean {
  try {
    return readFileSync(file, 'utf8') !== '';
  } catch {
    return false;
  }
}
