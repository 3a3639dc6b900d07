import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { workflowStatusName } from '../trajectory/status-agreement.js';
import { stateQuery, type TrajectoryState } from '../workflows/trajectory-state.js';

/** Where the UI reaches Temporal: a client for requests and live state, and Temporal UI's address for links. */
export interface TemporalAccess {
  client: Client;
  namespace: string;
  /** Temporal UI (e.g. http://127.0.0.1:8233); links are left out when unknown. */
  uiUrl?: string;
}

/** What the trajectory was asked to solve, as its workflow was started with (Postgres keeps no problem text). */
export interface WorkflowProblem {
  qid: string | null;
  problem: string;
  gold: string[];
}

export function temporalLink(access: TemporalAccess | undefined, trajectoryId: string): string | null {
  if (!access?.uiUrl) return null;
  return `${access.uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(access.namespace)}/workflows/${encodeURIComponent(trajectoryId)}`;
}

/** The problem and gold answers from the workflow's start event; null when Temporal does not have them. */
export async function loadWorkflowProblem(access: TemporalAccess | undefined, trajectoryId: string): Promise<WorkflowProblem | null> {
  if (!access) return null;
  try {
    const history = await access.client.workflow.getHandle(trajectoryId).fetchHistory();
    const payload = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    if (!payload) return null;
    const request = defaultPayloadConverter.fromPayload<{ qid?: unknown; problem?: unknown; gold?: unknown }>(payload);
    if (typeof request?.problem !== 'string') return null;
    return { qid: typeof request.qid === 'string' ? request.qid : null, problem: request.problem, gold: Array.isArray(request.gold) ? request.gold.map(String) : [] };
  } catch {
    // Not found (retention expired, started elsewhere) or unreachable: the page shows what Postgres has.
    return null;
  }
}

/** The workflow's live state (the `state` query), for trajectories still running; null when it cannot answer. */
export async function queryTrajectoryState(access: TemporalAccess | undefined, trajectoryId: string): Promise<TrajectoryState | null> {
  if (!access) return null;
  try {
    return await access.client.workflow.getHandle(trajectoryId).query(stateQuery);
  } catch {
    return null;
  }
}

/**
 * The workflow's execution status as Temporal reports it (`Running`, `Completed`, `Failed`, `Terminated`, `TimedOut`,
 * `Canceled`), of its latest run; `not found`, `unreachable`, or `not connected` (no Temporal given) otherwise.
 */
export async function describeWorkflowStatus(access: TemporalAccess | undefined, trajectoryId: string): Promise<string> {
  if (!access) return 'not connected';
  try {
    return workflowStatusName((await access.client.workflow.getHandle(trajectoryId).describe()).status.name);
  } catch (error) {
    return error instanceof WorkflowNotFoundError ? 'not found' : 'unreachable';
  }
}
