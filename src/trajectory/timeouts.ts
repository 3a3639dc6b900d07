import { z } from 'zod';
import { rule } from './schema-problems.js';

// Durations reach Temporal as `${seconds}s` strings, which do not parse in exponent form (1e-7s, 1e+21s):
// the bounds keep every value printable, and a workflow task from failing on a typo.
const MIN_SECONDS = 0.001;
const MAX_SECONDS = 31_536_000;

const seconds = (description: string, fallback: number) =>
  z
    .number(rule(`must be a number of seconds in [${MIN_SECONDS}, ${MAX_SECONDS}]`))
    .min(MIN_SECONDS)
    .max(MAX_SECONDS)
    .meta({ description, default: fallback });

/** Overrides for activity timeouts and the admission re-check, mostly for tests and slow servers. */
export const trajectoryTimeoutsSchema = z
  .strictObject({
    generateHeartbeatSeconds: seconds('How soon a dead GPU worker is noticed during generation.', 20).optional(),
    generateStartToCloseSeconds: seconds('The longest one generation attempt may take.', 1800).optional(),
    affinityFallbackSeconds: seconds(
      "How long a turn waits for the server that generated the trajectory's previous turn (it holds the prefix) before any server may take it.",
      2,
    ).optional(),
    environmentStepSeconds: seconds(
      "The longest one attempt of an environment's reset or step may take, in-process or on its own worker (5 attempts; a slow built-in such as code gets at least 120 s).",
      60,
    ).optional(),
    environmentHeartbeatSeconds: seconds(
      'How soon a dead environment worker is noticed during a reset or step (its worker heartbeats).',
      10,
    ).optional(),
    agentProgramSeconds: seconds(
      'The longest one run of an agent program may take, its model calls included (3 runs; a run again is answered the calls already made from the store).',
      1800,
    ).optional(),
    admissionRecheckSeconds: seconds('First re-check interval while queued for admission (a signal is the fast path).', 60).optional(),
    admissionRecheckMaxSeconds: seconds('The interval the re-check backs off to, doubling from admissionRecheckSeconds.', 1800).optional(),
    admissionRechecksPerRun: z
      .number(rule('must be a positive integer'))
      .int()
      .min(1)
      .meta({ description: 'Re-checks a queued trajectory makes before it continues-as-new (keeping its history small).', default: 100 })
      .optional(),
  })
  .refine(
    (t) =>
      t.admissionRecheckSeconds === undefined ||
      t.admissionRecheckMaxSeconds === undefined ||
      t.admissionRecheckSeconds <= t.admissionRecheckMaxSeconds,
    {
      error: (issue) => {
        const t = issue.input as { admissionRecheckSeconds: number; admissionRecheckMaxSeconds: number };
        return `must not exceed admissionRecheckMaxSeconds (${t.admissionRecheckSeconds} > ${t.admissionRecheckMaxSeconds})`;
      },
      path: ['admissionRecheckSeconds'],
    },
  );

export type TrajectoryTimeouts = z.input<typeof trajectoryTimeoutsSchema>;

export type ResolvedTrajectoryTimeouts = { [K in keyof TrajectoryTimeouts]-?: number };

export const DEFAULT_TRAJECTORY_TIMEOUTS: ResolvedTrajectoryTimeouts = {
  generateHeartbeatSeconds: 20,
  generateStartToCloseSeconds: 1800,
  affinityFallbackSeconds: 2,
  environmentStepSeconds: 60,
  environmentHeartbeatSeconds: 10,
  agentProgramSeconds: 1800,
  admissionRecheckSeconds: 60,
  admissionRecheckMaxSeconds: 1800,
  admissionRechecksPerRun: 100,
};

/**
 * The request's timeouts with defaults filled in (validate the request first). A first re-check interval
 * above the default cap raises the cap to it, so the back-off never shortens the interval asked for.
 */
export function resolveTrajectoryTimeouts(timeouts: TrajectoryTimeouts = {}): ResolvedTrajectoryTimeouts {
  const given = Object.fromEntries(Object.entries(timeouts).filter(([, v]) => v !== undefined)) as Partial<ResolvedTrajectoryTimeouts>;
  const resolved: ResolvedTrajectoryTimeouts = { ...DEFAULT_TRAJECTORY_TIMEOUTS, ...given };
  return { ...resolved, admissionRecheckMaxSeconds: Math.max(resolved.admissionRecheckMaxSeconds, resolved.admissionRecheckSeconds) };
}
