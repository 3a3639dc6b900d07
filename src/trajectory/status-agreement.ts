/** A stored trajectory row's status; null where Postgres has no row. */
export type RowStatus = 'completed' | 'failed';

/** Where a trajectory's row and its workflow, as Temporal reports it, stand with each other. */
export type StatusAgreement =
  | { verdict: 'agree' }
  /** `kind` names the pair for counting (`temporal_failed_row_completed`); `reason` says it in words. */
  | { verdict: 'disagree'; kind: string; reason: string }
  | { verdict: 'unknown'; reason: string };

/** Temporal's closed statuses, as visibility queries spell them; a trajectory's row must say what each says. */
export const CLOSED_WORKFLOW_STATUSES = ['Completed', 'Failed', 'Canceled', 'Terminated', 'TimedOut'] as const;
const OPEN = new Set(['Running', 'ContinuedAsNew', 'Paused']);
/**
 * Closed where the workflow's own failure path could not write the row (terminated, timed out, or cancelled before
 * its first step finished): the row is written afterwards, by the admission controller's sweep.
 */
const CLOSED_FROM_OUTSIDE = new Set(['Terminated', 'TimedOut', 'Canceled']);

/**
 * Compares a trajectory's row with its workflow's status. Only a closed workflow is compared: the workflow
 * commits its row (completed, or failed, also when cancelled) before it closes, so once Temporal says closed the
 * row is there and says the same, with no lag to wait out. The one row written after the close is a terminated, timed-out
 * or early-cancelled workflow's, which the sweep records as failed: until then its absence is no disagreement.
 */
export function statusAgreement(row: RowStatus | null, workflow: string | null): StatusAgreement {
  if (workflow === null || !(CLOSED_WORKFLOW_STATUSES as readonly string[]).includes(workflow)) {
    if (workflow !== null && OPEN.has(workflow))
      return { verdict: 'unknown', reason: `the workflow is ${workflow}: only a closed workflow is compared with its row` };
    return { verdict: 'unknown', reason: `Temporal gives no status for the workflow (${workflow ?? 'not reached'})` };
  }
  if (row === (workflow === 'Completed' ? 'completed' : 'failed')) return { verdict: 'agree' };
  if (row === null && CLOSED_FROM_OUTSIDE.has(workflow)) {
    return {
      verdict: 'unknown',
      reason: `the workflow was ${workflow} from outside Ratchet: the admission controller's sweep records its row as failed`,
    };
  }
  return {
    verdict: 'disagree',
    kind: `temporal_${snakeCase(workflow)}_row_${row ?? 'missing'}`,
    reason: `Temporal says ${workflow}, the row says ${row ?? 'nothing (there is no row)'}`,
  };
}

const SDK_NAMES: Record<string, string> = { CANCELLED: 'Canceled', TIMED_OUT: 'TimedOut', CONTINUED_AS_NEW: 'ContinuedAsNew' };

/** A status as the TypeScript SDK names it (`TIMED_OUT`) in the spelling of visibility queries (`TimedOut`). */
export function workflowStatusName(sdkName: string): string {
  return SDK_NAMES[sdkName] ?? `${sdkName.charAt(0)}${sdkName.slice(1).toLowerCase()}`;
}

function snakeCase(name: string): string {
  return name.replace(/(?<=[a-z])(?=[A-Z])/g, '_').toLowerCase();
}
