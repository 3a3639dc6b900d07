import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/stack/free-port.js';
import { startTemporalDevServer, type TemporalDevServer } from '../../src/stack/temporal-dev-server.js';
import { InvalidTrajectoryRequest, validateTrajectoryRequest } from '../../src/trajectory/request.js';

let server: TemporalDevServer;
let connection: Connection;
beforeAll(async () => {
  server = await startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
  connection = await Connection.connect({ address: server.address });
});
afterAll(async () => {
  await connection?.close();
  await server?.stop();
});

function problemsOutside(input: unknown): string[] {
  try {
    validateTrajectoryRequest(input);
    return [];
  } catch (error) {
    return (error as InvalidTrajectoryRequest).problems;
  }
}

const valid = { trajectoryId: 'run/q/0', qid: 'q', problem: 'How many?', gold: ['2'], options: { turns: 2 } };
const cases: Record<string, unknown> = {
  valid,
  grouped: {
    ...valid,
    trajectoryId: 'grpo/q/1',
    group: { run: { runId: 'grpo', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 }, groupId: 'grpo/q', size: 2, sample: 1 },
  },
  'non-numeric timeout': { ...valid, timeouts: { generateHeartbeatSeconds: 'twenty' } },
  'missing problem and numeric qid': { trajectoryId: 'run/q/0', qid: 7, gold: ['2'] },
  'NUL, a typo and a bad option': { ...valid, problem: 'a\u0000', options: { turn: 3, discount: 2 } },
  'over-long id': { ...valid, trajectoryId: 'é'.repeat(600) },
};

describe('the request schema inside the Temporal workflow sandbox', () => {
  it('gives the same verdicts as outside it', async () => {
    const taskQueue = `request-check-${Date.now()}`;
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: path.resolve(import.meta.dirname, 'fixtures/request-check-workflow.ts'),
      logger: new DefaultLogger('WARN'),
    });
    const workerConnection = await NativeConnection.connect({ address: server.address });
    try {
      const worker = await Worker.create({ connection: workerConnection, taskQueue, workflowBundle });
      const client = new Client({ connection });
      const inside = await worker.runUntil(
        Promise.all(
          Object.entries(cases).map(
            async ([name, input]) =>
              [
                name,
                await client.workflow.execute('requestCheck', {
                  taskQueue,
                  workflowId: `${taskQueue}-${name.replace(/\W+/g, '-')}`,
                  args: [input],
                  workflowExecutionTimeout: '30s',
                }),
              ] as const,
          ),
        ),
      );
      const outside = Object.entries(cases).map(([name, input]) => [name, problemsOutside(input)] as const);
      expect(Object.fromEntries(inside)).toEqual(Object.fromEntries(outside));
      expect(outside.filter(([, problems]) => problems.length > 0).map(([name]) => name)).toEqual(Object.keys(cases).slice(2));
    } finally {
      await workerConnection.close();
    }
  });
});
