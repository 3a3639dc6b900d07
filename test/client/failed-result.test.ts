import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { failedResult } from '../../src/client/run-rollouts.js';
import type { TrajectoryRequest } from '../../src/workflows/trajectory-state.js';

const request: TrajectoryRequest = { trajectoryId: 'r/q/0', qid: 'q', problem: '1+1', gold: ['2'] };
const turn = {
  turn: 0,
  contextLen: 3,
  outputLen: 5,
  finishReason: 'stop' as const,
  versionStart: 0,
  versionEnd: 0,
  verdict: 'wrong' as const,
  success: false,
  feedbackLen: 2,
};
const failedWith = (cause: Error) => new WorkflowFailedError('Workflow execution failed', cause, RetryState.NON_RETRYABLE_FAILURE);

describe('failedResult', () => {
  it('reads the type and class from the workflow failure details', () => {
    const cause = ApplicationFailure.nonRetryable('trajectory r/q/0 failed at turn 1: Activity task failed: boom', 'TrajectoryFailed', {
      turns: [turn],
      failureType: 'PolicyUnavailable',
      failureClass: 'infrastructure',
    });
    expect(failedResult(request, failedWith(cause))).toMatchObject({
      status: 'failed',
      turns: [turn],
      outputTokens: 5,
      error: cause.message,
      failureType: 'PolicyUnavailable',
      failureClass: 'infrastructure',
    });
  });

  it("falls back to the failure's own type, then to the message of an earlier release", () => {
    expect(failedResult(request, failedWith(ApplicationFailure.nonRetryable('turns must be positive', 'InvalidRolloutOptions')))).toMatchObject({
      failureType: 'InvalidRolloutOptions',
      failureClass: 'data',
      turns: [],
    });
    const legacy = ApplicationFailure.nonRetryable(
      'trajectory r/q/0 failed at turn 0: the prompt of r/q/0 fills the context window',
      'TrajectoryFailed',
      { turns: [] },
    );
    expect(failedResult(request, failedWith(legacy))).toMatchObject({ failureType: 'ContextExhausted', failureClass: 'data' });
    const unclear = ApplicationFailure.nonRetryable('trajectory r/q/0 failed at turn 0: Activity task failed: ???', 'TrajectoryFailed', {
      turns: [],
    });
    expect(failedResult(request, failedWith(unclear))).toMatchObject({ failureType: 'InternalError', failureClass: 'infrastructure' });
    expect(failedResult(request, failedWith(new CancelledFailure('Workflow cancelled')))).toMatchObject({
      failureType: 'Cancelled',
      failureClass: 'infrastructure',
    });
  });

  it('rethrows what is not a failed workflow', () => {
    expect(() => failedResult(request, new Error('connection lost'))).toThrow('connection lost');
  });
});
