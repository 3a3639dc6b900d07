import pg from 'pg';
import { redactUrl } from '../secrets/redact-url.js';
import { migrate } from './schema/migrations.js';

export class DatabaseUnavailable extends Error {
  override readonly name = 'DatabaseUnavailable';
  constructor(
    readonly url: string,
    cause: unknown,
  ) {
    super(`cannot reach Postgres at ${redact(url)}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** Opens a pool and applies migrations, failing with the (password-redacted) address when unreachable. */
export async function openDatabase(url: string, options: { max?: number } = {}): Promise<pg.Pool> {
  const pool = new pg.Pool({ connectionString: url, max: options.max ?? 10, connectionTimeoutMillis: 10_000 });
  // An idle client losing its server must not crash the process; the next query reports the failure.
  pool.on('error', () => undefined);
  try {
    await migrate(pool);
  } catch (error) {
    await pool.end();
    throw new DatabaseUnavailable(url, error);
  }
  return pool;
}

/** The URL with its password hidden (parsed, so passwords holding `/ @ : ? % #` are hidden whole). */
export function redact(url: string): string {
  return redactUrl(url);
}
