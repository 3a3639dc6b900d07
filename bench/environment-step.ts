// What a step costs on an environment's own worker against in-process: `npx vite-node bench/environment-step.ts
// [--trajectories N] [--turns T]`. The same stateful game (test/integration/fixtures/count-game.ts and count_game.py)
// runs in the CPU worker and under `ratchet-env serve`; from each trajectory's history it prints the wall time from a
// turn's generation completing to the next turn's generation being scheduled (the step and the workflow tasks around
// it), and the history events and bytes per turn.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { temporal } from '@temporalio/proto';
import { runRollouts } from '../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../src/client/submit.js';
import { loadConfig } from '../src/config.js';
import { stopChild } from '../src/stack/child-process.js';
import { loadEnvironmentModules } from '../src/stack/environment-modules.js';
import { pythonPackageEnv } from '../src/stack/python-package-env.js';
import { startSimulatedStack } from '../src/stack/simulated-stack.js';

const { values } = parseArgs({ options: { trajectories: { type: 'string', default: '12' }, turns: { type: 'string', default: '5' } } });
const trajectories = Number(values.trajectories);
const turns = Number(values.turns);
const FIXTURES = path.resolve(import.meta.dirname, '../test/integration/fixtures');
const EventType = temporal.api.enums.v1.EventType;

const stack = await startSimulatedStack({ seed: 7 });
const stopWorkers = await stack.startWorkers({ environments: await loadEnvironmentModules([path.join(FIXTURES, 'count-game.ts')]) });
const python = await pythonPackageEnv(loadConfig().stateDir);
const envWorker: ChildProcess = spawn(
  python,
  ['-m', 'ratchet_rollouts.environment_worker', 'serve', `${path.join(FIXTURES, 'count_game.py')}:CountGame`],
  {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
await new Promise<void>((resolve, reject) => {
  let output = '';
  const seen = (chunk: Buffer) => {
    output += chunk.toString();
    if (/serving environment/.test(output)) resolve();
  };
  envWorker.stdout!.on('data', seen);
  envWorker.stderr!.on('data', seen);
  envWorker.once('exit', (code) => reject(new Error(`ratchet-env serve exited (${code}): ${output}`)));
});

try {
  for (const environment of ['count-game-ts', 'count-game-py']) {
    const requests = stack.problems
      .slice(0, trajectories)
      .map((problem) =>
        trajectoryRequest(
          { ...problem, environment, environmentArgs: {} },
          { trajectoryId: trajectoryId(`step-cost-${environment}`, problem.qid, 0), options: { turns } },
        ),
      );
    await runRollouts(stack.client, requests);
    const gaps: number[] = [];
    const waits: number[] = [];
    const runs: number[] = [];
    let events = 0;
    let bytes = 0;
    let turnsSeen = 0;
    for (const request of requests) {
      const history = (await stack.client.workflow.getHandle(request.trajectoryId).fetchHistory()).events ?? [];
      const ms = (e: (typeof history)[number]) => Number(e.eventTime!.seconds) * 1000 + Math.round((e.eventTime!.nanos ?? 0) / 1e6);
      const scheduled = history.filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'generate');
      for (let i = 0; i + 1 < scheduled.length; i++) {
        const from = history.indexOf(scheduled[i]!);
        const to = history.indexOf(scheduled[i + 1]!);
        const completed = history.slice(from, to).find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)!;
        gaps.push(ms(scheduled[i + 1]!) - ms(completed));
        // A remote step: from the workflow's decision to send it (its workflow task's end) to its result, and from
        // then to the next generation's scheduling (the workflow tasks and local steps after it).
        const between = history.slice(history.indexOf(completed), to);
        const step = between.find((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'environmentStep');
        if (step) {
          const done = between.slice(between.indexOf(step)).find((e) => e.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)!;
          waits.push(ms(done) - ms(step));
          runs.push(ms(scheduled[i + 1]!) - ms(done));
        }
        events += to - from;
        bytes += JSON.stringify(history.slice(from, to)).length;
        turnsSeen += 1;
      }
    }
    const at = (q: number, values = gaps) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))]!;
    console.log(
      `${environment}: ${turnsSeen} turns; generation done → next generation scheduled p50 ${at(0.5)} ms, p95 ${at(0.95)} ms; ` +
        `${(events / turnsSeen).toFixed(1)} history events and ${Math.round(bytes / turnsSeen)} bytes of history per turn` +
        (waits.length > 0
          ? `; the remote step took p50 ${at(0.5, waits)} ms from scheduled to its result, then p50 ${at(0.5, runs)} ms to the next generation`
          : ''),
    );
  }
} finally {
  await stopChild(envWorker, { graceMs: 10_000 }).catch(() => undefined);
  await stopWorkers();
  await stack.stop();
}
