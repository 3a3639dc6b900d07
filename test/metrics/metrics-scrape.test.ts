import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { freePort } from '../../src/stack/free-port.js';
import { CLI } from '../cli/run-cli.js';
import { RolloutClient } from '../../src/client/rollout-client.js';
import { runStatus } from '../../src/store/read/run-status.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { GPU_TASK_QUEUE } from '../../src/task-queues.js';

// The real worker processes (`ratchet worker cpu|gpu`), each with RATCHET_METRICS_ADDRESS, against a real
// Temporal dev server and Postgres: the SDK runtime's exporter is installed once per process, so it is tested
// where it runs.
let stack: TestStack;
const workers: { kind: string; child: ChildProcess; metricsUrl: string }[] = [];

async function startWorker(kind: 'cpu' | 'gpu'): Promise<void> {
  const [metricsPort, sdkPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [CLI, 'worker', kind], {
    env: {
      ...process.env,
      LOG_LEVEL: 'error',
      TEMPORAL_ADDRESS: stack.temporalAddress,
      DATABASE_URL: stack.databaseUrl,
      RATCHET_POLICY_URL: stack.policy.url,
      RATCHET_METRICS_ADDRESS: `127.0.0.1:${metricsPort}`,
      RATCHET_SDK_METRICS_ADDRESS: `127.0.0.1:${sdkPort}`,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  workers.push({ kind, child, metricsUrl: `http://127.0.0.1:${metricsPort}/metrics` });
  // The worker says it polls once connected; the metrics server is up before that.
  await pollUntil(() => stderr, {
    what: `the ${kind} worker to say it polls`,
    timeoutMs: 90_000,
    done: (printed) => printed.includes('worker polling'),
    abortIf: () => {
      if (child.exitCode !== null) throw new Error(`${kind} worker did not start: ${stderr}`);
    },
  });
}

beforeAll(async () => {
  stack = await startTestStack({ seed: 3 });
  await startWorker('cpu');
  await startWorker('gpu');
});

afterAll(async () => {
  for (const { child } of workers) {
    if (child.exitCode !== null) continue;
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), new Promise((resolve) => setTimeout(resolve, 20_000))]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await stack?.stop();
});

/** One sample's value from Prometheus text: `name{labels} value`, labels matched as written. */
function sample(text: string, name: string, labels = ''): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}${labels ? `{${labels}}` : ''} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('/metrics of the worker processes after a run', () => {
  it("reports trajectories, turns by verdict and generated tokens as the database has them, plus the SDK's own metrics", async () => {
    const results = await runRollouts(stack.client, trajectoryRequests('metrics', stack.problems.slice(0, 5), 2, { turns: 3 }));
    expect(results.every((r) => r.status === 'completed')).toBe(true);
    const [cpu, gpu] = await Promise.all(workers.map(async (w) => (await fetch(w.metricsUrl)).text()));
    if (process.env.RATCHET_METRICS_DUMP)
      for (const [kind, text] of [
        ['cpu', cpu],
        ['gpu', gpu],
      ])
        writeFileSync(`${process.env.RATCHET_METRICS_DUMP}/${kind}.prom`, text!);

    const {
      rows: [stored],
    } = await stack.pool.query(
      "SELECT count(*) FILTER (WHERE status = 'completed')::int AS completed, sum(output_tokens)::int AS tokens FROM trajectories",
    );
    expect(stored.completed).toBe(10);
    const { rows: verdicts } = await stack.pool.query('SELECT verdict, count(*)::int AS n FROM monitor_records GROUP BY 1');
    for (const text of [cpu!, gpu!]) {
      // Per run: the `run` label is the run's name (this database holds this one run so far).
      expect(sample(text, 'ratchet_trajectories_total', 'run="metrics",status="completed",failure_type="",failure_class=""')).toBe(stored.completed);
      expect(sample(text, 'ratchet_generated_tokens_total', 'run="metrics"')).toBe(stored.tokens);
      for (const { verdict, n } of verdicts) expect(sample(text, 'ratchet_turns_total', `run="metrics",verdict="${verdict}"`)).toBe(n);
      expect(verdicts.reduce((sum, v) => sum + v.n, 0)).toBe(30);
      expect(sample(text, 'ratchet_running_trajectories', 'run="metrics"')).toBe(0);
      expect(sample(text, 'ratchet_queued_trajectories', 'run="metrics"')).toBe(0);
    }
    // The SDK runtime's exporter, appended: the CPU worker ran the workflows, the GPU worker the generate activities.
    expect(cpu).toMatch(/^temporal_workflow_completed_total\{.*\} 10$/m);
    // One series per task queue: first turns from the shared GPU queue, later ones from the server's own (turn affinity).
    const generateCounts = [...gpu!.matchAll(/^temporal_activity_execution_latency(?:_seconds)?_count\{(.*activity_type="generate".*)\} (\d+)$/gm)];
    expect(generateCounts.reduce((sum, [, , count]) => sum + Number(count), 0)).toBe(30);
    const queues = generateCounts.map(([, labels]) => /task_queue="([^"]*)"/.exec(labels!)?.[1]);
    expect(queues).toContain(GPU_TASK_QUEUE);
    expect(queues.filter((queue) => queue?.startsWith(`${GPU_TASK_QUEUE}@`))).toHaveLength(1);
  });

  it("reports a training run's groups, admission capacity and batches as `ratchet runs status` does", async () => {
    const stopController = await stack.startController();
    try {
      const run = { runId: 'mrun', maxHeadOffpolicyness: 0, batchSize: 1, maxConcurrent: 4 };
      const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
      await client.submit(run, stack.problems.slice(5, 8), { samples: 2, rollout: { turns: 1 } });
      const batch = await client.consume('mrun', 1, { consumer: 'metrics-test', waitMs: 60_000 });
      expect(batch).toBeDefined();
      await client.ack(batch!.batchId);
      const status = (await runStatus(stack.pool, 'mrun'))!;
      const text = await (await fetch(workers[0]!.metricsUrl)).text();
      expect(sample(text, 'ratchet_run_groups', 'run="mrun",state="pending"')).toBe(status.waiting);
      expect(sample(text, 'ratchet_run_groups', 'run="mrun",state="running"')).toBe(status.running);
      expect(sample(text, 'ratchet_consumed_trajectories_total', 'run="mrun"')).toBe(status.consumedTrajectories);
      expect(sample(text, 'ratchet_stale_trajectories_total', 'run="mrun"')).toBe(status.staleTrajectories);
      expect(sample(text, 'ratchet_run_admission_capacity', 'run="mrun"')).toBe(status.capacity);
      expect(sample(text, 'ratchet_batches_total', 'state="claimed"')).toBe(1);
      expect(sample(text, 'ratchet_batches_total', 'state="acknowledged"')).toBe(1);
      await client.cancel({ runId: 'mrun' });
    } finally {
      await stopController();
    }
  });
});
