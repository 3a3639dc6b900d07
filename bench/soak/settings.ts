import { parseArgs } from 'node:util';

/** Everything a soak run is configured by; printed with the results so a run can be compared with another. */
export interface SoakSettings {
  trajectories: number;
  samples: number;
  turns: number;
  /** η, batch size and max concurrency of the run, in groups. */
  maxHeadOffpolicyness: number;
  batchSize: number;
  maxConcurrent: number;
  /** Queued trajectories re-check admission after `firstSeconds`, doubling to `maxSeconds`, and continue-as-new after `perRun`. */
  recheck: { firstSeconds: number; maxSeconds: number; perRun: number };
  /** Short, so that a SIGKILLed GPU worker's turns are retried elsewhere within seconds. */
  generateHeartbeatSeconds: number;
  heartbeatIntervalMs: number;
  gpuSlots: number;
  policy: { tokensPerSecond: number; reasoningTokens: number; seed: number };
  /** Starts in flight at once while submitting (each start is one Temporal call). */
  submitConcurrency: number;
  /** Fractions of consumed groups at which processes are SIGKILLed and restarted, and which ones. */
  kills: { at: number; targets: string[] }[];
  /**
   * Fractions of consumed groups at which processes are frozen (SIGSTOP) for `seconds` and then resumed (SIGCONT),
   * as a long GC pause, CPU starvation or a VM migration stalls a host: past the workflow task timeout (10 s) for a
   * CPU worker, past `generateHeartbeatSeconds` for a GPU worker or the policy server.
   */
  pauses: { at: number; targets: string[]; seconds: number }[];
  /** Fraction of consumed groups after which worker memory counts as warmed up. */
  warmupAt: number;
  /** The run fails if no batch is consumed for this long. */
  stallSeconds: number;
}

const DEFAULTS: SoakSettings = {
  trajectories: 10_000,
  samples: 4,
  turns: 2,
  maxHeadOffpolicyness: 2,
  batchSize: 8,
  maxConcurrent: 32,
  recheck: { firstSeconds: 0, maxSeconds: 0, perRun: 1 }, // scaled to the run's size, see recheckFor
  generateHeartbeatSeconds: 5,
  heartbeatIntervalMs: 1_000,
  gpuSlots: 64,
  policy: { tokensPerSecond: 1_000_000, reasoningTokens: 40, seed: 11 },
  submitConcurrency: 64,
  // A killed CPU worker stalls its in-flight activities until their start-to-close timeout (1 min), the costliest
  // kill: it falls in both the first (20%) and the last (80%) quarter, so the throughput comparison measures
  // degradation over the run rather than where the kills landed.
  kills: [
    { at: 0.2, targets: ['cpu-killable', 'controller'] },
    { at: 0.4, targets: ['gpu-killable'] },
    { at: 0.6, targets: ['controller', 'gpu-killable'] },
    { at: 0.8, targets: ['cpu-killable', 'gpu-killable', 'controller'] },
  ],
  // Each CPU worker is frozen once while trajectories finish their last turn (the stall that used to fail stored
  // trajectories in Temporal), the GPU workers and the policy while turns stream; the trainer keeps consuming.
  pauses: [
    { at: 0.3, targets: ['cpu-killable'], seconds: 13 },
    { at: 0.5, targets: ['gpu-killable', 'policy'], seconds: 8 },
    { at: 0.7, targets: ['cpu-long'], seconds: 13 },
    { at: 0.7, targets: ['gpu-long'], seconds: 8 },
  ],
  warmupAt: 0.05,
  stallSeconds: 300,
};

/**
 * The re-check schedule, scaled to the run: the first re-check after trajectories/10 seconds (at least 2), doubling
 * to 4 times that, and a continue-as-new after every re-check. A queued run that re-checks once and continues costs
 * ~16 history events, a fifth of a whole 2-turn trajectory, and the Temporal dev server is the bottleneck of this
 * stack (about one core, ~350 events/s on two cores). Everything is submitted at once, so the first re-checks come
 * in one wave (spread ±20% by the workflow): at trajectories/40 s that wave asked the server for about three times
 * what it processes and stalled the run for minutes. Scaled this way, most queued trajectories re-check and
 * continue as new once or twice, and a run's shape is the same at any size.
 */
export function recheckFor(trajectories: number): SoakSettings['recheck'] {
  const firstSeconds = Math.max(2, Math.round(trajectories / 10));
  return { firstSeconds, maxSeconds: 4 * firstSeconds, perRun: 1 };
}

/**
 * `bench-soak [trajectories] [--recheck-first-seconds S] [--recheck-max-seconds S] [--rechecks-per-run N]
 * [--max-concurrent G] [--batch-size G] [--eta N] [--no-kills] [--no-pauses]`.
 */
export function soakSettings(argv: string[]): SoakSettings {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'recheck-first-seconds': { type: 'string' },
      'recheck-max-seconds': { type: 'string' },
      'rechecks-per-run': { type: 'string' },
      'max-concurrent': { type: 'string' },
      'batch-size': { type: 'string' },
      eta: { type: 'string' },
      'no-kills': { type: 'boolean' },
      'no-pauses': { type: 'boolean' },
    },
  });
  const settings = structuredClone(DEFAULTS);
  if (positionals[0] !== undefined) settings.trajectories = positiveInt(positionals[0], 'trajectories');
  settings.recheck = recheckFor(settings.trajectories);
  if (values['recheck-first-seconds']) settings.recheck.firstSeconds = positiveInt(values['recheck-first-seconds'], '--recheck-first-seconds');
  if (values['recheck-max-seconds']) settings.recheck.maxSeconds = positiveInt(values['recheck-max-seconds'], '--recheck-max-seconds');
  if (values['rechecks-per-run']) settings.recheck.perRun = positiveInt(values['rechecks-per-run'], '--rechecks-per-run');
  settings.recheck.maxSeconds = Math.max(settings.recheck.maxSeconds, settings.recheck.firstSeconds);
  if (values['max-concurrent']) settings.maxConcurrent = positiveInt(values['max-concurrent'], '--max-concurrent');
  if (values['batch-size']) settings.batchSize = positiveInt(values['batch-size'], '--batch-size');
  if (values.eta) settings.maxHeadOffpolicyness = positiveInt(values.eta, '--eta');
  if (values['no-kills']) settings.kills = [];
  if (values['no-pauses']) settings.pauses = [];
  return settings;
}

function positiveInt(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${what}: expected a positive integer, got "${text}"`);
  return n;
}
