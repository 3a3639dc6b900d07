// Orchestration throughput on the real stack (Temporal dev server + Postgres) with an instant simulated
// policy, so what is measured is Ratchet's own overhead per trajectory and turn, not decode time.
// `npm run bench:rollouts -- [trajectories] [turns]`
import { temporal } from '@temporalio/proto';
import '../src/stack/tool-logging.js';
import { runRollouts } from '../src/client/run-rollouts.js';
import { trajectoryRequests } from '../src/client/submit.js';
import { startSimulatedStack } from '../src/stack/simulated-stack.js';

const trajectories = Number(process.argv[2] ?? 64);
const turns = Number(process.argv[3] ?? 5);
const stack = await startSimulatedStack({ tokensPerSecond: 1e9, seed: 1 });
const stopWorkers = await stack.startWorkers();
try {
  const samples = Math.ceil(trajectories / stack.problems.length);
  const requests = trajectoryRequests(`bench-${Date.now()}`, stack.problems, samples, { turns }).slice(0, trajectories);
  await runRollouts(stack.client, trajectoryRequests('warmup', stack.problems.slice(0, 2), 1, { turns: 1 }));

  const started = performance.now();
  const finishedAt: number[] = [];
  const results = await runRollouts(stack.client, requests, { onFinished: () => finishedAt.push(performance.now() - started) });
  const seconds = (performance.now() - started) / 1000;

  const history = await stack.client.workflow.getHandle(requests[0]!.trajectoryId).fetchHistory();
  const historyBytes = temporal.api.history.v1.History.encode(history).finish().length;
  const completed = results.filter((r) => r.status === 'completed').length;
  const turnCount = results.reduce((sum, r) => sum + r.turns.length, 0);
  const sorted = [...finishedAt].sort((a, b) => a - b);
  console.log(
    JSON.stringify(
      {
        trajectories,
        turns,
        completed,
        wallSeconds: +seconds.toFixed(2),
        trajectoriesPerSecond: +(completed / seconds).toFixed(2),
        turnsPerSecond: +(turnCount / seconds).toFixed(1),
        activitiesPerSecond: +((turnCount * 3 + completed * 2) / seconds).toFixed(1),
        firstResultSeconds: +((sorted[0] ?? 0) / 1000).toFixed(2),
        historyBytesPerTrajectory: historyBytes,
        historyEvents: history.events?.length,
      },
      null,
      2,
    ),
  );
} finally {
  await stopWorkers();
  await stack.stop();
}
