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
  try {
    await pool.query('SELECT ratchet_publish_policy_version($1, $2)', [version, weightsPath ?? null]);
  } catch (error) {
    // The rule lives in SQL so that a trainer in any language publishes the same way.
    if ((error as { code?: string }).code === 'RV001') throw new PolicyVersionConflict((error as Error).message);
    throw error;
  }
}

/** The newest published version, or undefined before the first publish (the initial weights are version 0). */
export async function latestPolicyVersion(client: pg.Pool | pg.PoolClient): Promise<PolicyVersion | undefined> {
  const { rows } = await client.query<{ version: number; weights_path: string | null }>('SELECT version, weights_path FROM policy_versions ORDER BY version DESC LIMIT 1');
  return rows[0] ? { version: rows[0].version, weightsPath: rows[0].weights_path } : undefined;
}
