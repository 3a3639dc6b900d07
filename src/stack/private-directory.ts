import { lstat, mkdir, chown } from 'node:fs/promises';

/** A folder Ratchet runs Postgres from under root is not what it should be: someone else made it, or can write it. */
export class UnsafeDirectory extends Error {
  override readonly name = 'UnsafeDirectory';
}

/**
 * Makes `dir` (mode 0700, owned by `owner`) or, when it already exists, checks that it is a real folder owned
 * by `owner` or root that nobody else can write. The folders Ratchet keeps under the shared temp folder have
 * fixed names (the data must be found again on the next start), so another local user could create one first
 * and plant files or a symlink in it; such a folder is refused rather than used.
 */
export async function privateDirectory(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  try {
    await mkdir(dir, { mode: 0o700 });
    await chown(dir, owner.uid, owner.gid);
    return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const found = await lstat(dir);
  const problem = !found.isDirectory()
    ? 'is not a folder (a symlink?)'
    : found.uid !== owner.uid && found.uid !== 0
      ? `is owned by uid ${found.uid}, not ${owner.uid}`
      : (found.mode & 0o022) !== 0
        ? `can be written by other users (mode ${(found.mode & 0o777).toString(8)})`
        : undefined;
  if (problem) throw new UnsafeDirectory(`${dir} ${problem}: remove it, or set DATABASE_URL to a Postgres you run`);
}
