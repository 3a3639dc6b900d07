import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../src/workers/workflow-bundle.js';

const HISTORIES = path.resolve(import.meta.dirname, 'histories');

/**
 * The id the workflow ran under: a trajectory's id is its workflow id (and release 2 checks that), so a replay
 * must use it. It is the trajectory id of the recorded input.
 */
function recordedWorkflowId(history: {
  events: { workflowExecutionStartedEventAttributes?: { input?: { payloads?: { data?: string }[] } } }[];
}): string {
  const payload = history.events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  const input = payload ? JSON.parse(Buffer.from(payload, 'base64').toString('utf8')) : undefined;
  if (typeof input?.trajectoryId !== 'string') throw new Error('a recorded history without a trajectory id in its input');
  return input.trajectoryId;
}

describe('committed workflow histories', () => {
  it('replay deterministically against the current workflow code', { timeout: 120_000 }, async () => {
    const files = (await readdir(HISTORIES)).filter((file) => file.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(3);
    const histories = await Promise.all(
      files.map(async (file) => {
        const history = JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8'));
        return { file: path.basename(file, '.json'), workflowId: recordedWorkflowId(history), history };
      }),
    );
    const outcomes: { workflowId: string; error?: unknown }[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) outcomes.push(result);
    expect(outcomes.map((o) => o.workflowId)).toEqual(histories.map((h) => h.workflowId));
    for (const [i, outcome] of outcomes.entries()) expect(outcome.error, `${histories[i]!.file}: ${String(outcome.error)}`).toBeUndefined();
  });
});
