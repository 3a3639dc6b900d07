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
  /** The environment the request names; for a request from before environments, math, or code for a code task. */
  environment: string;
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
    const request = defaultPayloadConverter.fromPayload<{ qid?: unknown; problem?: unknown; gold?: unknown; environment?: unknown; code?: unknown }>(
      payload,
    );
    if (typeof request?.problem !== 'string') return null;
    return {
      qid: typeof request.qid === 'string' ? request.qid : null,
      problem: request.problem,
      gold: Array.isArray(request.gold) ? request.gold.map(String) : [],
      environment: typeof request.environment === 'string' ? request.environment : request.code ? 'code' : 'math',
    };
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

/** A pending activity of the workflow as Temporal describes it: what it is, how far its retries have gone. */
export interface PendingActivity {
  activityType: string;
  state: string;
  attempt: number;
  /** 0: unlimited. */
  maximumAttempts: number;
  lastFailure: string | null;
}

/**
 * The workflow as Temporal describes it. `status` is the execution status (`Running`, `Completed`, `Failed`,
 * `Terminated`, `TimedOut`, `Canceled`) of its latest run; `not found`, `unreachable`, or `not connected` (no
 * Temporal given) otherwise, with the other fields empty.
 */
export interface WorkflowDescription {
  status: string;
  runId: string | null;
  startTime: Date | null;
  closeTime: Date | null;
  historyLength: number | null;
  pendingActivities: PendingActivity[];
}

// temporal.api.enums.v1.PendingActivityState.
const ACTIVITY_STATES: Record<number, string> = { 1: 'scheduled', 2: 'started', 3: 'cancel requested', 4: 'paused', 5: 'pause requested' };

export async function describeWorkflow(access: TemporalAccess | undefined, trajectoryId: string): Promise<WorkflowDescription> {
  const none = { runId: null, startTime: null, closeTime: null, historyLength: null, pendingActivities: [] };
  if (!access) return { status: 'not connected', ...none };
  try {
    const description = await access.client.workflow.getHandle(trajectoryId).describe();
    return {
      status: workflowStatusName(description.status.name),
      runId: description.runId,
      startTime: description.startTime,
      closeTime: description.closeTime ?? null,
      historyLength: description.historyLength,
      pendingActivities: (description.raw.pendingActivities ?? []).map((activity): PendingActivity => ({
        activityType: activity.activityType?.name ?? '?',
        state: ACTIVITY_STATES[Number(activity.state ?? 0)] ?? 'unknown',
        attempt: activity.attempt ?? 1,
        maximumAttempts: activity.maximumAttempts ?? 0,
        lastFailure: activity.lastFailure?.message ?? null,
      })),
    };
  } catch (error) {
    return { status: error instanceof WorkflowNotFoundError ? 'not found' : 'unreachable', ...none };
  }
}

/** The workflow's execution status alone (see describeWorkflow). */
export async function describeWorkflowStatus(access: TemporalAccess | undefined, trajectoryId: string): Promise<string> {
  return (await describeWorkflow(access, trajectoryId)).status;
}
