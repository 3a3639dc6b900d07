// Records workflow histories from real runs for the replay test:
// `npx vite-node scripts/record-replay-histories.ts [case ...]` (all cases when none is named).
// Re-record (and commit) only when a workflow change is meant to be incompatible with running workflows.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdmissionController } from '../src/admission/admission-controller.js';
import { RolloutClient } from '../src/client/rollout-client.js';
import { submitTrajectory, trajectoryRequests } from '../src/rollout/submit.js';
import { localTemporalCliPath } from '../src/stack/temporal-cli.js';
import type { RolloutOptions } from '../src/trajectory/options.js';
import { startTestStack } from '../test/integration/local-stack.js';

const out = path.resolve(import.meta.dirname, '../test/replay/histories');
const stack = await startTestStack({ seed: 21 });
const stopWorkers = await stack.startWorkers();
const controller = new AdmissionController({ pool: stack.pool, temporal: stack.client, databaseUrl: stack.databaseUrl, pollMs: 200 });
await controller.start();
try {
  const cases: { name: string; options: Partial<RolloutOptions>; grouped?: boolean }[] = [
    { name: 'seed-default', options: {} },
    { name: 'early-stop-concat', options: { earlyStop: true, layout: 'concat', discount: 0.9 } },
    { name: 'rejected-request', options: { turns: 2, maxNewTokens: 500_000 } },
    { name: 'grouped-admission', options: { turns: 2 }, grouped: true },
  ];
  const wanted = process.argv.slice(2);
  for (const [i, testCase] of cases.entries()) {
    if (wanted.length > 0 && !wanted.includes(testCase.name)) continue;
    const problems = stack.problems.slice(i, i + 1);
    let workflowId: string;
    if (testCase.grouped) {
      const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
      const run = { runId: `replay-${testCase.name}`, maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 1 };
      const groups = await client.submit(run, problems, { samples: 1, rollout: testCase.options });
      await client.wait(groups);
      workflowId = groups[0]!.trajectoryIds[0]!;
    } else {
      const [request] = trajectoryRequests(`replay-${testCase.name}`, problems, 1, testCase.options);
      const { handle } = await submitTrajectory(stack.client, request!);
      await handle.result().catch(() => undefined);
      workflowId = handle.workflowId;
    }
    // The CLI writes the proto3 JSON that Worker.runReplayHistories reads.
    const { stdout } = await promisify(execFile)(localTemporalCliPath(path.resolve('.ratchet')), ['workflow', 'show', '--address', stack.temporalAddress, '--workflow-id', workflowId, '--output', 'json'], { maxBuffer: 64 << 20 });
    await writeFile(path.join(out, `${testCase.name}.json`), stdout);
    console.log(`recorded ${testCase.name}: ${stdout.length} bytes`);
  }
} finally {
  await controller.stop();
  await stopWorkers();
  await stack.stop();
}
