import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Python package (ratchet_rollouts) and its hashed lockfile, found from this module (src/ or dist/). */
export const PYTHON_PACKAGE_DIR = path.resolve(import.meta.dirname, '../../python');
/** The Python trainer example, written on the package. */
export const PYTHON_EXAMPLE_DIR = path.resolve(import.meta.dirname, '../../examples/python');

export class PythonEnvFailed extends Error {
  override readonly name = 'PythonEnvFailed';
}

/**
 * A virtualenv in the state folder with python/requirements.lock installed (`--require-hashes`) and the package
 * itself, as `pip install ./python` installs it. Made on first use; remade when the lockfile changes; the package
 * alone is reinstalled when its sources change; otherwise a no-op. Returns its python.
 */
export async function pythonPackageEnv(stateDir: string): Promise<string> {
  const dir = path.join(stateDir, 'python-env');
  const python = path.join(dir, 'bin', 'python');
  const lockfile = path.join(PYTHON_PACKAGE_DIR, 'requirements.lock');
  const lockHash = sha256(await readFile(lockfile));
  const sourceHash = sha256(Buffer.concat(await Promise.all((await packageFiles()).map((file) => readFile(file)))));
  const markers = { lock: path.join(dir, 'requirements.lock.sha256'), source: path.join(dir, 'package.sha256') };
  const pip = (args: string[]) => run(python, ['-m', 'pip', '--disable-pip-version-check', '--quiet', ...args], { timeout: 600_000 });
  const system = process.env.PYTHON ?? 'python3';
  try {
    if ((await readFile(markers.lock, 'utf8').catch(() => '')) !== lockHash) {
      await rm(dir, { recursive: true, force: true });
      await run(system, ['-m', 'venv', dir], { timeout: 120_000 });
      await pip(['install', '--require-hashes', '--no-deps', '-r', lockfile]);
      await writeFile(markers.lock, lockHash);
    }
    if ((await readFile(markers.source, 'utf8').catch(() => '')) !== sourceHash) {
      await pip(['install', '--no-deps', '--force-reinstall', PYTHON_PACKAGE_DIR]);
      await writeFile(markers.source, sourceHash);
    }
  } catch (error) {
    throw new PythonEnvFailed(
      `could not prepare the Python package's environment in ${dir} with ${system} -m venv and pip: ${(error as Error).message}`,
      { cause: error },
    );
  }
  return python;
}

async function packageFiles(): Promise<string[]> {
  const sources = path.join(PYTHON_PACKAGE_DIR, 'ratchet_rollouts');
  const names = (await readdir(sources)).filter((name) => name.endsWith('.py') || name.endsWith('.json') || name === 'py.typed').sort();
  return [path.join(PYTHON_PACKAGE_DIR, 'pyproject.toml'), ...names.map((name) => path.join(sources, name))];
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}
