import type pg from 'pg';
import { readTrajectories, type ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { expectSeedInvariants, expectTokenVersions } from '../support/seed-invariants.js';

export interface RowCheck {
  rows: number;
  valid: number;
  /** Trajectories whose output tokens came from more than one policy version: vLLM reloaded while they ran. */
  acrossVersions: number;
  /** The first few rows that failed, with why. */
  failures: string[];
}

/** Every completed row of the run, checked against the seed's invariants (scripts/support/seed-invariants.ts). */
export async function checkRunRows(pool: pg.Pool, tokenizer: ModelTokenizer, runId: string): Promise<RowCheck> {
  const check: RowCheck = { rows: 0, valid: 0, acrossVersions: 0, failures: [] };
  for await (const row of readTrajectories(pool)) {
    if (!row.trajectory_id.startsWith(`${runId}/`)) continue;
    check.rows++;
    try {
      expectSeedInvariants(row, tokenizer);
      expectTokenVersions(row);
      check.valid++;
    } catch (error) {
      if (check.failures.length < 5) check.failures.push(`${row.trajectory_id}: ${(error as Error).message.split('\n')[0]}`);
    }
    if (new Set(outputVersions(row)).size > 1) check.acrossVersions++;
  }
  return check;
}

function outputVersions(row: ExportedTrajectory): number[] {
  return row.token_versions.filter((version, i) => !row.prompt_mask[i] && version >= 0);
}
