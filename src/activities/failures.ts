import { ApplicationFailure } from '@temporalio/common';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from '../policy/policy-errors.js';
import { ContextMismatch } from '../store/turn-store.js';
import { DatabaseUnavailable } from '../store/database.js';
import { ChatTemplateError } from '../tokens/conversation-tokens.js';
import { GroupMismatch, RunConfigMismatch } from '../admission/admission-store.js';

/** Failure types the workflow and operators can branch on. */
export const FailureType = {
  PolicyUnavailable: 'PolicyUnavailable',
  PolicyRejectedRequest: 'PolicyRejectedRequest',
  PolicyProtocolError: 'PolicyProtocolError',
  ContextMismatch: 'ContextMismatch',
  VerifierError: 'VerifierError',
  VerifierTimeout: 'VerifierTimeout',
  MalformedTrajectory: 'MalformedTrajectory',
  DatabaseUnavailable: 'DatabaseUnavailable',
  InvalidGroup: 'InvalidGroup',
  RunConfigMismatch: 'RunConfigMismatch',
  GroupMismatch: 'GroupMismatch',
  GroupCancelled: 'GroupCancelled',
} as const;

/** Maps a domain error to an ApplicationFailure: retry what another attempt can fix, fail fast on the rest. */
export function classifyFailure(error: unknown): unknown {
  if (error instanceof ApplicationFailure) return error;
  if (error instanceof PolicyRejectedRequest) return ApplicationFailure.nonRetryable(error.message, FailureType.PolicyRejectedRequest);
  if (error instanceof ChatTemplateError) return ApplicationFailure.nonRetryable(error.message, 'ChatTemplateError');
  if (error instanceof ContextMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.ContextMismatch);
  if (error instanceof RunConfigMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.RunConfigMismatch);
  if (error instanceof GroupMismatch) return ApplicationFailure.nonRetryable(error.message, FailureType.GroupMismatch);
  if (error instanceof PolicyUnavailable) return ApplicationFailure.retryable(error.message, FailureType.PolicyUnavailable);
  if (error instanceof PolicyProtocolError) return ApplicationFailure.retryable(error.message, FailureType.PolicyProtocolError);
  if (error instanceof DatabaseUnavailable) return ApplicationFailure.retryable(error.message, FailureType.DatabaseUnavailable);
  return error;
}

/** Runs an activity body and rethrows its failure classified. */
export async function classified<T>(body: () => Promise<T>): Promise<T> {
  try {
    return await body();
  } catch (error) {
    throw classifyFailure(error);
  }
}
