/**
 * Your worker for the calculator agent workflow: Ratchet does not run it, you do, beside Ratchet's workers, where it can
 * reach their agent endpoint (loopback by default: the same machine). Run it with any TypeScript runner, e.g.
 *
 *   TEMPORAL_ADDRESS=localhost:7233 AGENT_TASK_QUEUE=calculator-agents npx vite-node examples/agents/workflow-agent/worker.ts
 */
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import * as activities from './activities.js';

async function run(): Promise<void> {
  const connection = await NativeConnection.connect({ address: process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233' });
  try {
    const worker = await Worker.create({
      connection,
      namespace: process.env['TEMPORAL_NAMESPACE'] ?? 'default',
      taskQueue: process.env['AGENT_TASK_QUEUE'] ?? 'calculator-agents',
      workflowsPath: fileURLToPath(new URL('./workflow.ts', import.meta.url)),
      activities,
    });
    console.log(`calculator agent worker polling ${worker.options.taskQueue}`);
    await worker.run();
  } finally {
    await connection.close();
  }
}

run().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
