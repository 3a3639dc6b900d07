// The trainer path on the real stack (Temporal dev server + Postgres) with an instant simulated policy:
// groups submitted under a staleness bound, a trainer that consumes, "trains" (does nothing), publishes and
// acknowledges. Prints end-to-end throughput, how long the trainer waited per step (orchestration the GPU
// would wait on), acknowledge latency, Arrow/Parquet encoding speed, and the bound's audit.
// `npm run bench:trainer -- [steps] [batchSize] [samples] [eta]`
import '../src/stack/tool-logging.js';
import { RolloutClient } from '../src/client/rollout-client.js';
import { arrowFileBytes, parquetBytes } from '../src/export/arrow-trajectories.js';
import { publishPolicyVersion } from '../src/store/write/policy-versions.js';
import { startSimulatedStack } from '../src/stack/simulated-stack.js';

const steps = Number(process.argv[2] ?? 10);
const batchSize = Number(process.argv[3] ?? 4);
const samples = Number(process.argv[4] ?? 4);
const eta = Number(process.argv[5] ?? 1);

const stack = await startSimulatedStack({ tokensPerSecond: 1e9, seed: 3 });
const stopWorkers = await stack.startWorkers();
const stopController = await stack.startController({ pollMs: 1000 });
try {
  const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
  const run = { runId: `bench-${Date.now()}`, maxHeadOffpolicyness: eta, batchSize, maxConcurrent: batchSize * (eta + 1) };
  const groupsNeeded = steps * batchSize;
  const epochs = Math.ceil(groupsNeeded / stack.problems.length);
  const started = performance.now();
  for (let epoch = 0; epoch < epochs; epoch++) {
    const problems = stack.problems.slice(0, Math.min(stack.problems.length, groupsNeeded - epoch * stack.problems.length));
    await client.submit(run, problems, { samples, rollout: { turns: 2 }, tag: `e${epoch}` });
  }
  const submitSeconds = (performance.now() - started) / 1000;

  const waits: number[] = [];
  const acks: number[] = [];
  let rows = 0;
  let arrowMs = 0;
  let arrowBytes = 0;
  let parquetMs = 0;
  let stale = 0;
  for (let step = 0; step < steps; step++) {
    const waitStart = performance.now();
    const batch = await client.consume(run.runId, batchSize, { waitMs: 300_000 });
    if (!batch) throw new Error(`no batch at step ${step}`);
    waits.push(performance.now() - waitStart);
    rows += batch.rows.length;
    stale += batch.staleTrajectories;
    let t = performance.now();
    arrowBytes += arrowFileBytes(batch.rows).length;
    arrowMs += performance.now() - t;
    t = performance.now();
    parquetBytes(batch.rows);
    parquetMs += performance.now() - t;
    await publishPolicyVersion(stack.pool, (await client.status(run.runId))!.policyVersion + 1);
    const ackStart = performance.now();
    await client.ack(batch.batchId);
    acks.push(performance.now() - ackStart);
  }
  const seconds = (performance.now() - started) / 1000;
  const audit = await stack.pool.query(
    `SELECT count(*) FILTER (WHERE admitted_accepted + admitted_running + 1 > ($2 + admitted_version + 1) * $3) AS over_bound, count(*) AS admitted
     FROM rollout_groups WHERE run_id = $1 AND status = 'admitted'`,
    [run.runId, eta, batchSize],
  );
  const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
  console.log(
    JSON.stringify(
      {
        steps,
        batchSize,
        samples,
        eta,
        trajectoriesConsumed: rows,
        wallSeconds: +seconds.toFixed(2),
        submitSeconds: +submitSeconds.toFixed(2),
        trajectoriesPerSecond: +(rows / seconds).toFixed(2),
        trainerWaitMedianMs: Math.round(median(waits)),
        trainerWaitFirstMs: Math.round(waits[0] ?? 0),
        ackMedianMs: +median(acks).toFixed(2),
        arrowMBPerSecond: +(arrowBytes / 1e6 / (arrowMs / 1000)).toFixed(1),
        arrowBytesPerTrajectory: Math.round(arrowBytes / rows),
        parquetMsPerBatch: +(parquetMs / steps).toFixed(1),
        staleTrajectories: stale,
        admittedGroups: Number(audit.rows[0].admitted),
        admissionsOverBound: Number(audit.rows[0].over_bound),
      },
      null,
      2,
    ),
  );
} finally {
  await stopController();
  await stopWorkers();
  await stack.stop();
}
