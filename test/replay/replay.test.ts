import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from '../../src/workers/workflow-bundle.js';

const HISTORIES = path.resolve(import.meta.dirname, 'histories');

describe('committed workflow histories', () => {
  it('replay deterministically against the current workflow code', { timeout: 120_000 }, async () => {
    const files = (await readdir(HISTORIES)).filter((file) => file.endsWith('.json')).sort();
    expect(files.length).toBeGreaterThanOrEqual(3);
    const histories = await Promise.all(files.map(async (file) => ({
      workflowId: path.basename(file, '.json'),
      history: JSON.parse(await readFile(path.join(HISTORIES, file), 'utf8')),
    })));
    const outcomes: { workflowId: string; error?: unknown }[] = [];
    for await (const result of Worker.runReplayHistories({ workflowBundle: await workflowBundle() }, histories)) outcomes.push(result);
    expect(outcomes.map((o) => o.workflowId)).toEqual(files.map((file) => path.basename(file, '.json')));
    for (const outcome of outcomes) expect(outcome.error, `${outcome.workflowId}: ${String(outcome.error)}`).toBeUndefined();
  });
});
