// A compressed training run on the real stack: the trainer submits every group at the start (most wait queued for
// nearly the whole run, re-checking admission and continuing-as-new), then consumes, acknowledges and publishes a
// policy version per batch, while the workers and the admission controller are SIGKILLed and restarted along the
// way, and the workers and the policy are frozen (SIGSTOP, then SIGCONT) past their timeouts. One CPU and one GPU
// worker are never killed, so their memory growth is measured honestly.
// Prints progress on stderr every 15 s and one JSON line on stdout; exits 1 if a trajectory was lost or duplicated,
// or if Temporal's status of a trajectory disagrees with its row.
// Needs `dist/` (the workers are `node dist/cli/main.js` processes). `npm run bench:soak -- [trajectories] [--recheck-max-seconds S]`
import os from 'node:os';
import path from 'node:path';
import '../src/stack/tool-logging.js';
import { RolloutClient, type SubmitOptions } from '../src/client/rollout-client.js';
import { loadDataset } from '../src/datasets/index.js';
import { freePort } from '../src/stack/free-port.js';
import { waitForLine, waitUntilPolling } from '../scripts/support/ratchet-process.js';
import { historyAudit, outcomes, statusAudit, workingTableRows } from './soak/audit.js';
import { Fleet } from './soak/fleet.js';
import { soakSettings } from './soak/settings.js';
import { startSoakStack, type SoakStack } from './soak/stack.js';
import { planGroups, submitAll } from './soak/submission.js';
import { quarterThroughput, train, type TrainingRecord } from './soak/trainer.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const CLI = path.join(ROOT, 'dist/cli/main.js');
const DATASET = '/work/shared/data/gsm8k_train.jsonl';
const LONG_LIVED = ['cpu-long', 'gpu-long'] as const;

const settings = soakSettings(process.argv.slice(2));
const dataset = process.env.RATCHET_SOAK_DATASET ?? DATASET;
const groups = Math.ceil(settings.trajectories / settings.samples);
const wallStart = performance.now();
// Other work on the machine slows the stack down: the load average says how quiet the run was.
const loadAtStart = os.loadavg().map((n) => +n.toFixed(2));
const seconds = (fromMs = wallStart) => +((performance.now() - fromMs) / 1000).toFixed(1);
const say = (line: string) => process.stderr.write(`[soak ${seconds().toFixed(0).padStart(5)} s] ${line}\n`);

let stack: SoakStack | undefined;
let fleet: Fleet | undefined;
let progressTimer: NodeJS.Timeout | undefined;
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    clearInterval(progressTimer);
    await fleet?.stopAll().catch(() => undefined);
    await stack?.stop().catch(() => undefined);
  })();
  return cleaning;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    say(`${signal}: stopping every process this benchmark started`);
    void cleanup().finally(() => process.exit(130));
  });
}

async function main(): Promise<number> {
  say(`${groups} groups × ${settings.samples} = ${groups * settings.samples} trajectories; starting Temporal and Postgres`);
  stack = await startSoakStack(path.join(ROOT, '.ratchet'));
  const { problems, errors } = await loadDataset(dataset, { limit: groups });
  if (errors.length) say(`${errors.length} dataset rows skipped (first: ${String(errors[0])})`);

  // The simulated policy and every worker are separate processes, as on a cluster.
  const env = {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DATABASE_URL: stack.databaseUrl,
    LOG_LEVEL: 'error',
    RATCHET_GPU_SLOTS: String(settings.gpuSlots),
    RATCHET_HEARTBEAT_INTERVAL_MS: String(settings.heartbeatIntervalMs),
    RATCHET_VERIFIER_THREADS: '1',
  };
  fleet = new Fleet(CLI, env);
  const policy = fleet.start('policy', [
    'sim-policy',
    '--dataset',
    dataset,
    '--port',
    String(await freePort()),
    '--seed',
    String(settings.policy.seed),
    '--tokens-per-second',
    String(settings.policy.tokensPerSecond),
    '--reasoning-tokens',
    String(settings.policy.reasoningTokens),
  ]);
  const policyUrl = (await waitForLine(policy, /simulated policy at (\S+)/))[1]!;
  const workers = { 'cpu-long': 'cpu', 'gpu-long': 'gpu', 'cpu-killable': 'cpu', 'gpu-killable': 'gpu' } as const;
  await Promise.all(
    Object.entries(workers).map(([name, kind]) =>
      waitUntilPolling(stack!.client, fleet!.start(name, ['worker', kind], { RATCHET_POLICY_URL: policyUrl }), kind),
    ),
  );
  fleet.start('controller', ['controller', '--poll-ms', '1000']);
  say(`policy at ${policyUrl}; 2 CPU + 2 GPU workers polling, controller started (${seconds()} s)`);

  const client = RolloutClient.fromConnections(stack.client, stack.pool, stack.databaseUrl);
  const run = {
    runId: `soak-${Date.now()}`,
    maxHeadOffpolicyness: settings.maxHeadOffpolicyness,
    batchSize: settings.batchSize,
    maxConcurrent: settings.maxConcurrent,
  };
  let submittedGroups = 0;
  let record: TrainingRecord | undefined;
  // RSS at 5% (warm: code loaded, workflow cache filled), 25%, 50%, 75% and 100% consumed, and the peak seen.
  const rss: Record<string, { warm?: number; end?: number; peak: number; byPercentConsumed: Record<string, number> }> = Object.fromEntries(
    LONG_LIVED.map((name) => [name, { peak: 0, byPercentConsumed: {} }]),
  );
  const rssMilestones = [settings.warmupAt, 0.25, 0.5, 0.75];
  let lastConsumed = 0;
  progressTimer = setInterval(() => void progress(), 15_000);
  async function progress() {
    const status = await client.status(run.runId).catch(() => undefined);
    const consumed = record ? [...record.consumedTrajectories.values()].length : 0;
    const memory = await Promise.all(
      LONG_LIVED.map(async (name) => {
        const mib = await fleet!.rssMiB(name).catch(() => Number.NaN);
        rss[name]!.peak = Math.max(rss[name]!.peak, mib || 0);
        return `${name} ${mib} MiB`;
      }),
    );
    say(
      `submitted ${submittedGroups}/${groups} groups; waiting ${status?.waiting ?? '?'}, running ${status?.running ?? '?'}, ` +
        `consumed ${status?.consumed ?? '?'} groups (${consumed} trajectories, ${((consumed - lastConsumed) / 15).toFixed(1)}/s); ` +
        `policy v${record?.policyVersion ?? 0}; kills ${fleet!.kills.length}, pauses ${fleet!.pauses.length}, crashes ${fleet!.crashes.length}; ${memory.join(', ')}`,
    );
    lastConsumed = consumed;
  }

  const submitStart = performance.now();
  const submitted = await submitAll(
    client,
    run,
    planGroups(problems, groups),
    {
      samples: settings.samples,
      rollout: { turns: settings.turns },
      timeouts: {
        admissionRecheckSeconds: settings.recheck.firstSeconds,
        admissionRecheckMaxSeconds: settings.recheck.maxSeconds,
        admissionRechecksPerRun: settings.recheck.perRun,
        generateHeartbeatSeconds: settings.generateHeartbeatSeconds,
      } as SubmitOptions['timeouts'],
    },
    settings.submitConcurrency,
    (n) => {
      submittedGroups = n;
    },
  );
  const submitSeconds = seconds(submitStart);
  say(
    `submitted ${submitted.trajectoryIds.length} trajectories in ${submitSeconds} s (${(submitted.trajectoryIds.length / submitSeconds).toFixed(0)}/s); training`,
  );

  const kills = [...settings.kills];
  const pauses = [...settings.pauses];
  // A pause runs while the trainer goes on consuming, as a stalled host does not stop the rest of the cluster.
  const pausing: Promise<void>[] = [];
  record = await train(client, run.runId, groups, settings.batchSize, settings.stallSeconds * 1000, async (r) => {
    record = r;
    const fraction = r.consumedGroups.size / groups;
    while (rssMilestones.length && fraction >= rssMilestones[0]!) {
      const milestone = rssMilestones.shift()!;
      for (const name of LONG_LIVED) {
        const mib = await fleet!.rssMiB(name);
        rss[name]!.byPercentConsumed[`${Math.round(milestone * 100)}`] = mib;
        if (milestone === settings.warmupAt) rss[name]!.warm = mib;
      }
    }
    while (kills.length && fraction >= kills[0]!.at) {
      const { at, targets } = kills.shift()!;
      for (const name of targets) await fleet!.killAndRestart(name);
      say(`${Math.round(at * 100)}% consumed: SIGKILLed and restarted ${targets.join(', ')}`);
    }
    while (pauses.length && fraction >= pauses[0]!.at) {
      const { at, targets, seconds: pauseSeconds } = pauses.shift()!;
      pausing.push(...targets.map((name) => fleet!.pause(name, pauseSeconds)));
      say(`${Math.round(at * 100)}% consumed: froze ${targets.join(', ')} for ${pauseSeconds} s (SIGSTOP, then SIGCONT)`);
    }
  });
  await Promise.all(pausing);
  for (const name of LONG_LIVED) rss[name]!.end = rss[name]!.byPercentConsumed['100'] = await fleet.rssMiB(name);
  const trainSeconds = seconds(record.startedMs);
  const activeSeconds = seconds(submitStart);
  clearInterval(progressTimer);
  say(`training loop done in ${trainSeconds} s${record.stalled ? ' (STALLED)' : ''}; auditing histories and tables`);

  const ended = await outcomes(stack.pool, run.runId);
  const consumedIds = record.consumedTrajectories;
  const lost = submitted.trajectoryIds.filter((id) => !consumedIds.has(id) && !ended.failedIds.has(id));
  const duplicated =
    [...consumedIds.values()].filter((n) => n > 1).length + [...record.consumedGroups.values()].filter((n) => n > 1).length + ended.extraRows;
  const auditStart = performance.now();
  const histories = await historyAudit(stack.client, submitted.trajectoryIds);
  const statuses = await statusAudit(stack.client, histories.statuses, ended.byId);
  const tables = await workingTableRows(stack.pool);
  const throughput = quarterThroughput(record);
  const growth = (name: string) => {
    const { warm, end } = rss[name]!;
    return warm && end ? +(((end - warm) / warm) * 100).toFixed(1) : null;
  };
  const result = {
    trajectories: {
      submitted: submitted.trajectoryIds.length,
      duplicateSubmissions: submitted.duplicates,
      completed: ended.completed,
      consumed: consumedIds.size,
      failed: ended.failed,
      failedByType: ended.failedByType,
      rejectedGroups: record.rejectedGroups,
      lost: lost.length,
      lostExamples: lost.slice(0, 5),
      duplicated,
      disagreements: statuses.disagreements,
      disagreementExamples: statuses.examples,
      temporalStatuses: statuses.temporal,
    },
    throughput: {
      ...throughput,
      unit: 'trajectories/s by consumption time',
      lastOverFirst: throughput.firstQuarter ? +(throughput.lastQuarter / throughput.firstQuarter).toFixed(3) : null,
    },
    largestHistory: {
      byEvents: histories.largestByEvents,
      byBytes: histories.largestByBytes,
      runsInspected: histories.runsInspected,
      method: histories.method,
    },
    historyEvents: {
      total: histories.totalEvents,
      perTrajectory: +(histories.totalEvents / submitted.trajectoryIds.length).toFixed(1),
      perSecondFromSubmitToLastBatch: +(histories.totalEvents / activeSeconds).toFixed(0),
    },
    continueAsNew: { runs: histories.continuedAsNew, mostForOneTrajectory: histories.mostContinuationsOfOne },
    workerRssMiB: Object.fromEntries(LONG_LIVED.map((name) => [name, { ...rss[name], growthPercent: growth(name) }])),
    rssMeasuredFrom: `${settings.warmupAt * 100}% consumed to the end, long-lived workers (never killed)`,
    workingTableRows: tables,
    processes: { kills: fleet.kills, pauses: fleet.pauses, crashes: fleet.crashes },
    seconds: { wall: seconds(), submit: submitSeconds, trainingLoop: trainSeconds, audit: seconds(auditStart) },
    machine: { cores: os.cpus().length, loadAverageAtStart: loadAtStart, loadAverageAtEnd: os.loadavg().map((n) => +n.toFixed(2)) },
    policyVersions: record.policyVersion,
    stalled: record.stalled,
    settings: { ...settings, groups, dataset },
    checks: {
      noneLost: lost.length === 0,
      noneDuplicated: duplicated === 0,
      temporalAgreesWithRows: statuses.disagreements === 0,
      lastQuarterAtLeast90PercentOfFirst: throughput.lastQuarter >= 0.9 * throughput.firstQuarter,
      noHistoryOver2000Events: histories.largestByEvents.events <= 2000,
      workerRssGrowthUnder20Percent: LONG_LIVED.every((name) => (growth(name) ?? Number.POSITIVE_INFINITY) < 20),
      workingTablesEmpty: Object.values(tables).every((n) => !n),
    },
  };
  say(`lost ${lost.length}, duplicated ${duplicated}, disagreements ${statuses.disagreements} (Temporal ${JSON.stringify(statuses.temporal)})`);
  process.stdout.write(`${JSON.stringify(result)}\n`);
  return lost.length > 0 || duplicated > 0 || statuses.disagreements > 0 ? 1 : 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error) {
  // After Ctrl-C the loop fails on the closed pool: that is the stop, not a finding.
  if (!cleaning)
    say(`failed: ${(error as Error).stack ?? String(error)}${fleet?.crashes.length ? `\ncrashed processes: ${fleet.crashes.join('\n')}` : ''}`);
} finally {
  await cleanup();
}
process.exit(exitCode);
