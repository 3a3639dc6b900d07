import type pg from 'pg';

export interface PolicyVersion {
  version: number;
  weightsPath: string | null;
}

export class PolicyVersionConflict extends Error {
  override readonly name = 'PolicyVersionConflict';
}

/** Channel a publish notifies, so GPU workers react at once rather than at their next poll. */
export const POLICY_VERSION_CHANNEL = 'ratchet_policy_version';

/** Publishes a version. Versions only go forward: one at or below the latest is refused. */
export async function publishPolicyVersion(pool: pg.Pool, version: number, weightsPath?: string): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('LOCK TABLE policy_versions IN EXCLUSIVE MODE');
    const latest = await latestVersion(client);
    if (latest && version <= latest.version) {
      throw new PolicyVersionConflict(`policy version ${version} is not newer than the published version ${latest.version}`);
    }
    await client.query('INSERT INTO policy_versions (version, weights_path) VALUES ($1, $2)', [version, weightsPath ?? null]);
    await client.query(`SELECT pg_notify($1, $2)`, [POLICY_VERSION_CHANNEL, String(version)]);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The newest published version, or undefined before the first publish (the initial weights are version 0). */
export async function latestPolicyVersion(pool: pg.Pool): Promise<PolicyVersion | undefined> {
  return latestVersion(pool);
}

async function latestVersion(client: pg.Pool | pg.PoolClient): Promise<PolicyVersion | undefined> {
  const { rows } = await client.query<{ version: number; weights_path: string | null }>('SELECT version, weights_path FROM policy_versions ORDER BY version DESC LIMIT 1');
  return rows[0] ? { version: rows[0].version, weightsPath: rows[0].weights_path } : undefined;
}
