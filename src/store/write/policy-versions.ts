import type pg from 'pg';
import { type ProbeReference, probeReference } from '../../policy/weights-proof.js';

export interface PolicyVersion {
  version: number;
  weightsPath: string | null;
  /** The publisher's probe reference for these weights (src/policy/weights-proof.ts); null where none was given. */
  reference: ProbeReference | null;
  /** Why a stored reference cannot be used (written by a client that skipped the check); the version is then refused. */
  referenceInvalid?: string;
}

export class PolicyVersionConflict extends Error {
  override readonly name = 'PolicyVersionConflict';
}

/** A probe reference that is not what `ratchet_rollouts.weights_probe` writes. */
export class InvalidProbeReference extends Error {
  override readonly name = 'InvalidProbeReference';
  constructor(reason: string) {
    super(`invalid probe reference: ${reason}`);
  }
}

/** Channel a publish notifies, so GPU workers react at once rather than at their next poll. */
export const POLICY_VERSION_CHANNEL = 'ratchet_policy_version';

/**
 * Publishes a version. Versions only go forward: one at or below the latest is refused. The reference is checked here
 * (a malformed one is refused at publish, not found out by every GPU worker).
 */
export async function publishPolicyVersion(pool: pg.Pool, version: number, weightsPath?: string, reference?: unknown): Promise<void> {
  const parsed = reference === undefined ? undefined : probeReference.safeParse(reference);
  if (parsed && !parsed.success)
    throw new InvalidProbeReference(parsed.error.issues.map((issue) => `${issue.path.join('.') || 'reference'}: ${issue.message}`).join('; '));
  const checked = parsed?.data;
  try {
    if (checked === undefined) await pool.query('SELECT ratchet_publish_policy_version($1, $2)', [version, weightsPath ?? null]);
    else await pool.query('SELECT ratchet_publish_policy_version($1, $2, $3::jsonb)', [version, weightsPath ?? null, JSON.stringify(checked)]);
  } catch (error) {
    // The rule lives in SQL so that a trainer in any language publishes the same way.
    if ((error as { code?: string }).code === 'RV001') throw new PolicyVersionConflict((error as Error).message);
    throw error;
  }
}

/** The newest published version, or undefined before the first publish (the initial weights are version 0). */
export async function latestPolicyVersion(client: pg.Pool | pg.PoolClient): Promise<PolicyVersion | undefined> {
  const { rows } = await client.query<{ version: number; weights_path: string | null; probe_reference: unknown }>(
    'SELECT version, weights_path, probe_reference FROM policy_versions ORDER BY version DESC LIMIT 1',
  );
  return rows[0] ? toPolicyVersion(rows[0]) : undefined;
}

/** One published version, or undefined. */
export async function policyVersion(client: pg.Pool | pg.PoolClient, version: number): Promise<PolicyVersion | undefined> {
  const { rows } = await client.query<{ version: number; weights_path: string | null; probe_reference: unknown }>(
    'SELECT version, weights_path, probe_reference FROM policy_versions WHERE version = $1',
    [version],
  );
  return rows[0] ? toPolicyVersion(rows[0]) : undefined;
}

function toPolicyVersion(row: { version: number; weights_path: string | null; probe_reference: unknown }): PolicyVersion {
  const base = { version: row.version, weightsPath: row.weights_path };
  if (row.probe_reference === null) return { ...base, reference: null };
  const reference = probeReference.safeParse(row.probe_reference);
  return reference.success
    ? { ...base, reference: reference.data }
    : { ...base, reference: null, referenceInvalid: reference.error.issues.map((issue) => issue.message).join('; ') };
}
