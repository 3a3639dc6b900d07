import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The Python trainer example and its pinned requirements, found from this module (src/ or dist/). */
export const PYTHON_EXAMPLE_DIR = path.resolve(import.meta.dirname, '../../examples/python');

/**
 * A virtualenv with the Python example's requirements (temporalio, psycopg, pyarrow, numpy) in the state
 * folder, made on first use and remade when requirements.txt changes. Returns its python.
 */
export async function pythonExampleEnv(stateDir: string): Promise<string> {
  const dir = path.join(stateDir, 'python-example');
  const python = path.join(dir, 'bin', 'python');
  const requirements = path.join(PYTHON_EXAMPLE_DIR, 'requirements.txt');
  const wanted = createHash('sha256').update(await readFile(requirements)).digest('hex');
  const marker = path.join(dir, 'requirements.sha256');
  if ((await readFile(marker, 'utf8').catch(() => '')) === wanted) return python;
  const system = process.env.PYTHON ?? 'python3';
  try {
    await rm(dir, { recursive: true, force: true });
    await run(system, ['-m', 'venv', dir], { timeout: 120_000 });
    await run(python, ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '-r', requirements], { timeout: 600_000 });
  } catch (error) {
    throw new Error(`could not prepare the Python example's environment in ${dir} with ${system} -m venv and pip: ${(error as Error).message}`);
  }
  await writeFile(marker, wanted);
  return python;
}
