import { ApplicationFailure } from '@temporalio/common';
import { SandboxFailure } from '../code/index.js';
import { EnvironmentFailure } from '../environments/environment.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../policy/policy-errors.js';
import { RawLogprobsServer } from '../policy/raw-logprobs-server.js';
import { ContextMismatch } from '../store/write/turn-store.js';
import { DatabaseUnavailable } from '../store/database.js';
import { isPermanentDatabaseError, isTransientDatabaseError, sqlState } from '../store/database-errors.js';
import { ChatTemplateError } from '../tokens/conversation-tokens.js';
import { UnknownToolCallFormatError } from '../tokens/tool-call-formats.js';
import { GroupMismatch, RunConfigMismatch } from '../store/write/rollout-groups.js';
import { FailureType } from '../trajectory/failure.js';

// Activities import the failure types from here; their home is the pure module the workflow can use too.
export { FailureType };

/** Maps a domain error to an ApplicationFailure: retry what another attempt can fix, fail fast on the rest. */
export function classifyFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  // What the environment says of its own step, with the type and retry it names.
  if (error instanceof EnvironmentFailure) {
    return error.retryable
      ? ApplicationFailure.retryable(error.message, error.failureType)
      : ApplicationFailure.nonRetryable(error.message, error.failureType);
  }
  // A sandbox that could not run at all is ours: retried, never scored.
  if (error instanceof SandboxFailure) return ApplicationFailure.retryable(`sandbox failed: ${error.message}`, FailureType.SandboxFailure);
  // Another attempt would reach the same server: the operator must restart it with the flag the message names.
  if (error instanceof RawLogprobsServer) return ApplicationFailure.nonRetryable(error.message, FailureType.RawLogprobsServer);
  if (error instanceof PolicyRejectedRequest) return ApplicationFailure.nonRetryable(error.message, FailureType.PolicyRejectedRequest);
  if (error instanceof ChatTemplateError) return ApplicationFailure.nonRetryable(error.message, FailureType.ChatTemplateError);
  // A model whose template has no tool-call format Ratchet knows cannot answer an agent's calls (tool-call-formats.ts).
  if (error instanceof UnknownToolCallFormatError) return ApplicationFailure.nonRetryable(error.message, FailureType.ChatTemplateError);
  if (error instanceof ContextMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.ContextMismatch);
  if (error instanceof RunConfigMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.RunConfigMismatch);
  if (error instanceof GroupMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.GroupMismatch);
  if (error instanceof PolicyUnavailable) return ApplicationFailure.retryable(error.message, FailureType.PolicyUnavailable);
  if (error instanceof PolicyProtocolError) return ApplicationFailure.retryable(error.message, FailureType.PolicyProtocolError);
  // The store proxy retries without a maximum: right for a lost connection, never for a rejected statement.
  if (isPermanentDatabaseError(error)) {
    return ApplicationFailure.nonRetryable(
      `Postgres rejected the statement (SQLSTATE ${sqlState(error)}): ${(error as Error).message}`,
      FailureType.DatabaseRejected,
    );
  }
  if (error instanceof DatabaseUnavailable || isTransientDatabaseError(error)) {
    return ApplicationFailure.retryable((error as Error).message, FailureType.DatabaseUnavailable);
  }
  return error;
}

/**
 * A step re-run after its trajectory was stored as failed. Only a stale run can see that (a failure is stored after
 * the workflow recorded it, so no run the workflow still waits on comes later); it fails without writing.
 */
export function storedAsFailed(trajectoryId: string, step: string): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`trajectory ${trajectoryId} is already stored as failed: nothing left to ${step}`, FailureType.StaleStep);
}

/** Runs an activity body and rethrows its failure classified. */
export async function classified<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw classifyFailure(error);
  }
}
