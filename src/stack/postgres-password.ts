import { randomBytes } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { registerSecret } from '../secrets/known-secrets.js';

export const POSTGRES_USER = 'ratchet';
/** The fixed password of releases before 0.2: a state folder made by one still starts, and is moved to a random one. */
const LEGACY_PASSWORD = 'ratchet';

/** Where the embedded Postgres's password is kept: the state folder, readable by its owner only. */
export function passwordFile(stateDir: string): string {
  return path.join(stateDir, 'postgres-password');
}

/** The embedded Postgres's password: random, made on first start and kept in the state folder (0600). */
export async function embeddedPassword(stateDir: string): Promise<string> {
  const file = passwordFile(stateDir);
  try {
    await writeFile(file, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  await chmod(file, 0o600); // a copy restored with looser permissions is tightened
  const password = (await readFile(file, 'utf8')).trim();
  registerSecret(password);
  return password;
}

/**
 * Connects as Ratchet's user to the `postgres` database. A data folder made by an earlier release still has the
 * fixed password: when the stored one is refused, the legacy one is tried and, if it works, replaced.
 */
export async function connectAdmin(port: number, password: string, dataDir: string): Promise<pg.Client> {
  try {
    return await connect(port, password);
  } catch (error) {
    if ((error as { code?: string }).code !== '28P01') throw error; // invalid_password
  }
  let legacy: pg.Client;
  try {
    legacy = await connect(port, LEGACY_PASSWORD);
  } catch (error) {
    if ((error as { code?: string }).code !== '28P01') throw error;
    throw new Error(
      `the embedded Postgres in ${dataDir} refuses the password kept in the state folder: restore that file, or remove ${dataDir} to start afresh`,
    );
  }
  await legacy.query(`ALTER ROLE ${POSTGRES_USER} PASSWORD ${legacy.escapeLiteral(password)}`);
  return legacy;
}

async function connect(port: number, password: string): Promise<pg.Client> {
  const client = new pg.Client({ host: '127.0.0.1', port, user: POSTGRES_USER, password, database: 'postgres', connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error;
  }
}
