import { describe, expect, it } from 'vitest';
import { formatSummary, summarise } from '../../src/cli/run-summary.js';

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

describe('summarise', () => {
  it('counts failures by type and class, and prints them', () => {
    const completed = {
      trajectoryId: 'c',
      qid: 'q',
      status: 'completed' as const,
      layout: 'seed' as const,
      turns: [{ ...turn, success: true }],
      rewards: [1],
      outputTokens: 5,
    };
    const failed = (failureType: string, failureClass: 'infrastructure' | 'data') => ({
      ...completed,
      status: 'failed' as const,
      turns: [],
      rewards: [],
      failureType,
      failureClass,
    });
    const summary = summarise(
      [completed, failed('PolicyUnavailable', 'infrastructure'), failed('ContextExhausted', 'data'), failed('PolicyUnavailable', 'infrastructure')],
      2,
    );
    expect(summary).toMatchObject({
      completed: 1,
      failed: 3,
      failuresByType: { PolicyUnavailable: 2, ContextExhausted: 1 },
      failuresByClass: { infrastructure: 2, data: 1 },
    });
    expect(Object.keys(summary.failuresByType)).toEqual(['PolicyUnavailable', 'ContextExhausted']);
    expect(formatSummary(summary)).toContain('failures          PolicyUnavailable 2, ContextExhausted 1 (infrastructure 2, data 1)');
    expect(formatSummary(summarise([completed], 1))).not.toContain('failures');
  });
});
