/**
 * `npm run demo:train`: the whole RL loop, real, on this machine. Makes version 0 of a tiny Qwen3 (a new model and
 * a short warm-up), starts a real CPU vLLM serving it (float32, processed logprobs, dev mode for in-place reloads),
 * the embedded stack with both workers, the admission controller and the Ratchet UI, then runs the PyTorch trainer
 * of examples/train against it; checks every stored row of the run against the seed's invariants, writes the
 * chart, stops everything it started (by pid) and sums the run up in its last line.
 *
 *   npm run demo:train -- [--steps N] [--eta N] [--temperature T] [--keep-up] [--screenshots DIR]   (needs `npm run setup:vllm`)
 *
 * `--screenshots docs/images` refreshes the README's pictures of the run page, taken mid-run and at the end.
 */
import './quiet-logs.js';
import { existsSync } from 'node:fs';
import { chmod, mkdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import '../../src/stack/tool-logging.js';
import { loadConfig } from '../../src/config.js';
import { startLocalRuntime, type LocalRuntime } from '../../src/stack/local-runtime.js';
import { freePort } from '../../src/stack/free-port.js';
import { localTemporalCliPath } from '../../src/stack/temporal-cli.js';
import { servedWeights } from '../../src/store/write/served-weights.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { startRatchetUi } from '../../src/ui/server.js';
import { uiPort } from '../../src/ui/ui-port.js';
import { startVllm, VLLM_PYTHON, type RunningVllm } from '../../src/stack/vllm-server.js';
import { RunPageScreenshots } from './run-page-screenshots.js';
import { checkRunRows } from './run-rows.js';
import { runTrainer, type TrainerEvent, type TrainerRun } from './trainer-process.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const { values: flags } = parseArgs({
  options: {
    steps: { type: 'string', default: '40' },
    eta: { type: 'string', default: '1' },
    temperature: { type: 'string', default: '1.3' },
    'warmup-steps': { type: 'string', default: '80' },
    // The README's chart is docs/images/demo-train.png (`--chart docs/images/demo-train.png` refreshes it).
    chart: { type: 'string' },
    'keep-up': { type: 'boolean', default: false },
    // Tied input and output embeddings (Qwen3-0.6B's shape): every reload proven against the trainer's reference.
    tied: { type: 'boolean', default: false },
    screenshots: { type: 'string' },
  },
});

const started = Date.now();
const stops: (() => Promise<unknown>)[] = [];
const say = (line: string) => process.stdout.write(`${line}\n`);

async function main(): Promise<number> {
  if (!existsSync(VLLM_PYTHON)) {
    say('demo:train needs the CPU vLLM environment: run `npm run setup:vllm` first (about 10 minutes, once).');
    return 2;
  }
  const config = loadConfig();
  const work = path.join(config.stateDir, 'demo-train');
  const models = path.join(work, 'models');
  // The demo's own Temporal and Postgres, fresh each time: policy versions are global to a database and only go
  // forward, and a GPU worker starts by loading the newest one, so a run must not inherit another's versions.
  const stackDir = path.join(work, 'stack');
  const chart = path.resolve(flags.chart ?? path.join(work, 'demo-train.png'));
  for (const dir of [models, stackDir]) await rm(dir, { recursive: true, force: true });
  await mkdir(stackDir, { recursive: true });
  await chmod(stackDir, 0o755); // the embedded Postgres runs as its own user when started as root
  if (!process.env.TEMPORAL_CLI_PATH && existsSync(localTemporalCliPath(config.stateDir)))
    process.env.TEMPORAL_CLI_PATH = localTemporalCliPath(config.stateDir);

  say('1/4 version 0: a new tiny Qwen3 (2 layers, the real Qwen3 vocabulary) and its warm-up on the answer format');
  const prepared = (
    await track(runTrainer(['prepare', '--out', models, '--warmup-steps', flags['warmup-steps'], ...(flags.tied ? ['--tied'] : [])], {}))
  ).at(-1)!;
  say(
    `    warm-up: ${prepared.warmup_steps} steps, loss ${prepared.warmup_loss === null ? '-' : num(prepared.warmup_loss, 3)}, first-turn accuracy ${num(prepared.warmup_greedy_accuracy, 2)} greedy, ${num(prepared.warmup_sampled_accuracy, 2)} sampled`,
  );

  say('2/4 a real vLLM (CPU, float32, processed logprobs) serving version 0');
  const vllm: RunningVllm = await startVllm({ model: path.join(models, 'v0000'), dtype: 'float32' });
  stops.push(() => vllm.stop());
  say(`    vLLM ${vllm.url} (pid ${vllm.pid})`);

  say('3/4 the embedded stack: Temporal, Postgres, CPU and GPU workers, the admission controller, the Ratchet UI');
  const runtime: LocalRuntime = await startLocalRuntime(
    {
      ...config,
      stateDir: stackDir,
      databaseUrl: undefined,
      temporal: { ...config.temporal, address: undefined },
      ports: { temporal: await freePort(), temporalUi: await freePort(), postgres: await freePort() },
      // One GPU slot per sequence the vLLM batches (startVllm's --max-num-seqs).
      policyUrl: vllm.url,
      policyBackend: 'vllm',
      gpuSlots: 8,
    },
    { problems: [], workers: true, headless: false },
  );
  stops.push(() => runtime.stop());
  const tokenizer = await loadModelTokenizer(config.tokenizerDir);
  const temporal = { client: runtime.client, namespace: config.temporal.namespace, uiUrl: runtime.stack.temporalUiUrl };
  // The usual UI port when it is free (a `ratchet dev` may hold it), else any.
  const ui = await startRatchetUi({ pool: runtime.pool, tokenizer, port: uiPort(), temporal })
    .catch(() => startRatchetUi({ pool: runtime.pool, tokenizer, port: 0, temporal }))
    .catch((error: unknown) => {
      say(`    (no Ratchet UI: ${(error as Error).message})`);
      return undefined;
    });
  if (ui) stops.push(() => ui.close());
  const runId = `demo-train-${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}`;
  say(
    `    run ${runId}${ui ? `: watch it at ${ui.url}/runs/${encodeURIComponent(runId)}` : ''}${runtime.stack.temporalUiUrl ? `, Temporal UI ${runtime.stack.temporalUiUrl}` : ''}`,
  );

  say(`4/4 training: ${flags.steps} steps, η = ${flags.eta}, each publishing a version the GPU worker loads into vLLM mid-run`);
  const screenshots = ui && flags.screenshots ? new RunPageScreenshots(path.resolve(flags.screenshots), ui.url, runId) : undefined;
  if (screenshots) stops.push(() => screenshots.close());
  const midRun = Math.floor(Number(flags.steps) / 2);
  const trainer = runTrainer(
    [
      'train',
      '--models',
      models,
      '--vllm-url',
      vllm.url,
      '--run',
      runId,
      '--steps',
      flags.steps,
      '--eta',
      flags.eta,
      '--temperature',
      flags.temperature,
      '--metrics',
      path.join(work, `${runId}.jsonl`),
      '--chart',
      chart,
    ],
    { TEMPORAL_ADDRESS: runtime.stack.temporalAddress, DATABASE_URL: runtime.stack.databaseUrl },
    (event) => {
      if (event.event === 'step') say(stepLine(event, Number(flags.steps)));
      if (event.event === 'step' && Number(event.step) + 1 === midRun) void screenshots?.snap('run-page-mid-run');
    },
  );
  const events = await track(trainer);
  const done = events.at(-1)!;
  const rows = await checkRunRows(runtime.pool, tokenizer, runId);
  const ledger = await servedWeights(runtime.pool);
  const proofs = {
    proven: ledger.filter((row) => row.verdict === 'proven').length,
    other: ledger.filter((row) => row.verdict !== 'proven'),
    worst: Math.max(0, ...ledger.map((row) => row.meanAbsDelta ?? 0)),
  };
  for (const row of proofs.other) say(`    version ${row.version} ${row.verdict} on ${row.server}: ${row.errorType ?? ''} ${row.error ?? ''}`);
  for (const failure of rows.failures) say(`    invalid row ${failure}`);
  if (screenshots) {
    const runPage = `/runs/${encodeURIComponent(runId)}`;
    const shots = [await screenshots.snap('run-page'), await screenshots.snap('run-page-trajectories', runPage, { from: '#filters', height: 1_100 })];
    say(
      `    screenshots ${shots
        .filter(Boolean)
        .map((file) => path.relative(ROOT, file!))
        .join(', ')}`,
    );
  }
  say(`    chart ${path.relative(ROOT, chart)}; steps ${path.relative(ROOT, path.join(work, `${runId}.jsonl`))}`);
  if (flags['keep-up']) {
    say(`    --keep-up: everything stays up for the UI (${ui?.url ?? 'no UI'}); Ctrl-C to stop`);
    await new Promise((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
  }
  await stopAll();
  const minutes = (Date.now() - started) / 60_000;
  say(
    `${summaryLine(done, rows, minutes)}; ${proofs.proven} versions proven on vLLM (probe mean |Δ| at most ${sci(proofs.worst)}), ${proofs.other.length} not`,
  );
  // A tied model does not learn the task in 40 steps yet (examples/train/README.md): it is run for its proofs.
  const learned = flags.tied || Number(done.reward_last_fifth) - Number(done.reward_first_fifth) >= 0.2;
  const met =
    learned &&
    Number(done.reloaded) >= 20 &&
    done.parity_within_bounds === true &&
    rows.valid === rows.rows &&
    minutes <= 20 &&
    proofs.other.length === 0;
  return met ? 0 : 1;
}

/** Keeps the trainer stoppable (by its pid) until it exits. */
async function track(run: TrainerRun): Promise<TrainerEvent[]> {
  stops.push(() => run.stop());
  return run.done;
}

function stepLine(e: TrainerEvent, steps: number): string {
  const turns = (e.reward_by_turn as number[]).map((r, t) => `t${t + 1} ${r.toFixed(2)}`).join(' ');
  return (
    `    step ${String(Number(e.step) + 1).padStart(2)}/${steps}  reward ${num(e.mean_reward, 2)} (${turns})  ` +
    `parity mean ${sci(e.parity_mean_abs)} p99 ${sci(e.parity_p99_abs)} over ${e.parity_tokens} tokens  ` +
    `lag ${num(e.version_lag_mean, 2)}/${e.version_lag_max} (η ${e.eta})  → v${e.policy_version}  ${num(e.step_seconds, 1)} s`
  );
}

function summaryLine(done: TrainerEvent, rows: { rows: number; valid: number; acrossVersions: number }, minutes: number): string {
  return (
    `demo:train: ${done.steps} steps, ${done.published} versions published, ${done.reloaded} reloaded by vLLM mid-run ` +
    `(${rows.acrossVersions} trajectories spanning versions); reward ${num(done.reward_first_fifth, 2)} → ${num(done.reward_last_fifth, 2)} ` +
    `(first → last fifth of steps); parity max over steps: mean |Δ| ${sci(done.parity_mean_abs_max)}, p99 ${sci(done.parity_p99_abs_max)} ` +
    `(bounds 0.02, 0.1: ${done.parity_within_bounds ? 'within' : 'OUTSIDE'}); version lag max ${done.version_lag_max} (η ${done.eta}); ` +
    `${rows.valid}/${rows.rows} rows pass the seed invariants; ${minutes.toFixed(1)} min`
  );
}

const num = (value: unknown, digits: number) => Number(value).toFixed(digits);
const sci = (value: unknown) => Number(value).toExponential(1);

let stopping: Promise<void> | undefined;
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  })();
  return stopping;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    if (!flags['keep-up']) void stopAll().then(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    say(`demo:train failed: ${(error as Error).stack ?? error}`);
    await stopAll();
    say(`demo:train: failed after ${((Date.now() - started) / 60_000).toFixed(1)} min (see above); everything it started is stopped`);
    process.exit(1);
  },
);
