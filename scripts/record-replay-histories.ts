// Records workflow histories from real runs for the replay test: `npx vite-node scripts/record-replay-histories.ts`.
// Re-record (and commit) only when a workflow change is meant to be incompatible with running workflows.
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { localTemporalCliPath } from '../src/stack/temporal-cli.js';
import path from 'node:path';
import { submitTrajectory, trajectoryRequests } from '../src/rollout/submit.js';
import { startTestStack } from '../test/integration/local-stack.js';

const out = path.resolve(import.meta.dirname, '../test/replay/histories');
const stack = await startTestStack({ seed: 21 });
const stopWorkers = await stack.startWorkers();
try {
  const cases = [
    { name: 'seed-default', options: {} },
    { name: 'early-stop-concat', options: { earlyStop: true, layout: 'concat' as const, discount: 0.9 } },
    { name: 'rejected-request', options: { turns: 2, maxNewTokens: 500_000 } },
  ];
  for (const [i, testCase] of cases.entries()) {
    const [request] = trajectoryRequests(`replay-${testCase.name}`, stack.problems.slice(i, i + 1), 1, testCase.options);
    const { handle } = await submitTrajectory(stack.client, request!);
    await handle.result().catch(() => undefined);
    // The CLI writes the proto3 JSON that Worker.runReplayHistories reads.
    const { stdout } = await promisify(execFile)(localTemporalCliPath(path.resolve('.ratchet')), ['workflow', 'show', '--address', stack.temporalAddress, '--workflow-id', handle.workflowId, '--output', 'json'], { maxBuffer: 64 << 20 });
    await writeFile(path.join(out, `${testCase.name}.json`), stdout);
    console.log(`recorded ${testCase.name}: ${stdout.length} bytes`);
  }
} finally {
  await stopWorkers();
  await stack.stop();
}
