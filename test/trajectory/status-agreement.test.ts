import { describe, expect, it } from 'vitest';
import { statusAgreement, workflowStatusName } from '../../src/trajectory/status-agreement.js';

describe("comparing a trajectory's row with its workflow's status", () => {
  it('agrees when the row says what the closed workflow says', () => {
    expect(statusAgreement('completed', 'Completed')).toEqual({ verdict: 'agree' });
    for (const closed of ['Failed', 'Canceled', 'Terminated', 'TimedOut']) expect(statusAgreement('failed', closed)).toEqual({ verdict: 'agree' });
  });

  it('flags a completed row whose workflow did not complete, and a failed row whose workflow did', () => {
    expect(statusAgreement('completed', 'Failed')).toEqual({
      verdict: 'disagree',
      kind: 'temporal_failed_row_completed',
      reason: 'Temporal says Failed, the row says completed',
    });
    expect(statusAgreement('completed', 'TimedOut')).toMatchObject({ verdict: 'disagree', kind: 'temporal_timed_out_row_completed' });
    expect(statusAgreement('completed', 'Canceled')).toMatchObject({ verdict: 'disagree', kind: 'temporal_canceled_row_completed' });
    expect(statusAgreement('failed', 'Completed')).toMatchObject({
      verdict: 'disagree',
      kind: 'temporal_completed_row_failed',
      reason: 'Temporal says Completed, the row says failed',
    });
  });

  it('flags a missing row once the workflow closed by its own code, which writes the row before it closes', () => {
    for (const closed of ['Completed', 'Failed']) {
      expect(statusAgreement(null, closed)).toMatchObject({ verdict: 'disagree', kind: `temporal_${closed.toLowerCase()}_row_missing` });
    }
  });

  it('waits for the sweep to record a workflow closed from outside, which has no row until then', () => {
    expect(statusAgreement(null, 'Terminated')).toMatchObject({
      verdict: 'unknown',
      reason: expect.stringMatching(/sweep records its row as failed/),
    });
    expect(statusAgreement(null, 'TimedOut').verdict).toBe('unknown');
    // Cancelled before its first step finished: its failure path was not armed yet, so the sweep writes its row too.
    expect(statusAgreement(null, 'Canceled').verdict).toBe('unknown');
  });

  it('compares nothing while the workflow runs, even with a row already there', () => {
    for (const row of ['completed', 'failed', null] as const) {
      expect(statusAgreement(row, 'Running')).toMatchObject({
        verdict: 'unknown',
        reason: expect.stringMatching(/only a closed workflow is compared/),
      });
    }
    expect(statusAgreement(null, 'ContinuedAsNew').verdict).toBe('unknown');
  });

  it("knows nothing without Temporal's answer", () => {
    expect(statusAgreement('completed', null)).toMatchObject({ verdict: 'unknown', reason: expect.stringMatching(/not reached/) });
    expect(statusAgreement('failed', 'not found')).toMatchObject({ verdict: 'unknown', reason: expect.stringMatching(/not found/) });
  });
});

describe('status names', () => {
  it("spells the SDK's names as visibility queries do", () => {
    expect(['RUNNING', 'COMPLETED', 'FAILED', 'CANCELLED', 'TERMINATED', 'TIMED_OUT', 'CONTINUED_AS_NEW'].map(workflowStatusName)).toEqual([
      'Running',
      'Completed',
      'Failed',
      'Canceled',
      'Terminated',
      'TimedOut',
      'ContinuedAsNew',
    ]);
  });
});
