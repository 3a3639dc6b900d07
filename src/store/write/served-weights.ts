import type pg from 'pg';
import type { ProofFigures } from '../../policy/weights-proof.js';

/** Channel every ledger change notifies (payload: `<version>`), so a publisher waiting on a version hears at once. */
export const SERVED_WEIGHTS_CHANNEL = 'ratchet_served_weights';

export type ServedWeightsVerdict = 'loading' | 'proven' | 'unproven' | 'refused';

export interface ServedWeightsRow {
  server: string;
  version: number;
  requestedAt: Date;
  loadedAt: Date | null;
  decidedAt: Date | null;
  verdict: ServedWeightsVerdict;
  probeTokens: number | null;
  meanAbsDelta: number | null;
  maxAbsDelta: number | null;
  errorType: string | null;
  error: string | null;
}

export interface ServerNow {
  server: string;
  /** null: the server holds weights Ratchet cannot vouch for, and its worker takes no turn. */
  version: number | null;
  since: Date;
  detail: string | null;
}

/** A load asked of a server (again, after a restart of its worker: the row starts over). */
export async function recordLoadRequested(pool: pg.Pool, server: string, version: number): Promise<void> {
  await pool.query(
    `INSERT INTO served_weights (server, version, verdict) VALUES ($1, $2, 'loading')
     ON CONFLICT (server, version) DO UPDATE SET requested_at = now(), loaded_at = NULL, decided_at = NULL, verdict = 'loading',
       probe_tokens = NULL, mean_abs_delta = NULL, max_abs_delta = NULL, error_type = NULL, error = NULL`,
    [server, version],
  );
  await notify(pool, version);
}

/** The server answered the load. */
export async function recordLoaded(pool: pg.Pool, server: string, version: number): Promise<void> {
  await pool.query('UPDATE served_weights SET loaded_at = now() WHERE server = $1 AND version = $2', [server, version]);
}

/** The verdict on a load, with the probe's figures where it ran and the typed error where it failed. */
export async function recordVerdict(
  pool: pg.Pool,
  server: string,
  version: number,
  verdict: Exclude<ServedWeightsVerdict, 'loading'>,
  details: {
    figures?: ProofFigures;
    errorType?: string;
    error?: string;
  } = {},
): Promise<void> {
  await pool.query(
    `UPDATE served_weights SET decided_at = now(), verdict = $3, probe_tokens = $4, mean_abs_delta = $5, max_abs_delta = $6,
       error_type = $7, error = $8 WHERE server = $1 AND version = $2`,
    [
      server,
      version,
      verdict,
      details.figures?.tokens ?? null,
      details.figures?.meanAbsDelta ?? null,
      details.figures?.maxAbsDelta ?? null,
      details.errorType ?? null,
      details.error?.slice(0, 2_000) ?? null,
    ],
  );
  await notify(pool, version);
}

/** Which version the server serves now (null: none Ratchet can vouch for). */
export async function recordServing(pool: pg.Pool, server: string, version: number | null, detail?: string): Promise<void> {
  await pool.query(
    `INSERT INTO server_weights (server, version, detail) VALUES ($1, $2, $3)
     ON CONFLICT (server) DO UPDATE SET version = $2, detail = $3,
       since = CASE WHEN server_weights.version IS NOT DISTINCT FROM $2 THEN server_weights.since ELSE now() END`,
    [server, version, detail?.slice(0, 2_000) ?? null],
  );
}

/** The ledger, newest first (optionally of one version). */
export async function servedWeights(pool: pg.Pool, options: { version?: number; limit?: number } = {}): Promise<ServedWeightsRow[]> {
  const { rows } = await pool.query<Record<string, unknown>>(
    `SELECT * FROM served_weights WHERE $1::int IS NULL OR version = $1 ORDER BY version DESC, server LIMIT $2`,
    [options.version ?? null, options.limit ?? 200],
  );
  return rows.map((row) => ({
    server: row.server as string,
    version: row.version as number,
    requestedAt: row.requested_at as Date,
    loadedAt: row.loaded_at as Date | null,
    decidedAt: row.decided_at as Date | null,
    verdict: row.verdict as ServedWeightsVerdict,
    probeTokens: row.probe_tokens as number | null,
    meanAbsDelta: row.mean_abs_delta as number | null,
    maxAbsDelta: row.max_abs_delta as number | null,
    errorType: row.error_type as string | null,
    error: row.error as string | null,
  }));
}

/** Which version every server serves now. */
export async function serversNow(pool: pg.Pool): Promise<ServerNow[]> {
  const { rows } = await pool.query<{ server: string; version: number | null; since: Date; detail: string | null }>(
    'SELECT * FROM server_weights ORDER BY server',
  );
  return rows;
}

async function notify(pool: pg.Pool, version: number): Promise<void> {
  await pool.query('SELECT pg_notify($1, $2)', [SERVED_WEIGHTS_CHANNEL, String(version)]);
}
