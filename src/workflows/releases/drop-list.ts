import { Patch } from './patches.js';

/**
 * What each compatibility measure keeps alive, and when it can go (docs/releases.md). Nothing imports this at
 * run time: it is read by people and checked by test/workflows/releases/drop-list.test.ts (every patch has an
 * entry; every file and function named exists).
 *
 * Releases are counted by the workflow: 1 grouped admission, 2 request schema + admission back-off, 3 local steps,
 * 4 stored outcome, 5 environments + turn affinity, 6 bounded environments and the episode built from parts, 7 one
 * release marker per run (frozen in test/deploy/workflow-releases/r1-…/r7-…).
 */
export interface CompatibilityMeasure {
  /** The patch id in `Patch`, or a name for a measure kept without a patch (an activity's input, a heartbeat). */
  id: string;
  patch: boolean;
  /** The release that made the change: code of earlier releases is what the measure keeps working. */
  introducedIn: number;
  /** Who still needs it: runs (histories) of earlier releases, or workers of earlier releases. */
  keepsWorking: string;
  /** The code kept alive, as `path: what` (paths from the repository root). */
  keepsAlive: readonly string[];
  /** When the kept code can be deleted, and how to check. */
  dropWhen: string;
}

/**
 * No run started before release `n` is open. A run, not a workflow: a queued trajectory that continues as new
 * starts a new run on the release then deployed, so a workflow id can be older than its run.
 */
function noRunStartedBefore(n: number): string {
  return (
    `no trajectory run started before release ${n}'s CPU workers replaced the earlier ones is open: ` +
    `\`temporal workflow count --query 'WorkflowType="trajectory" AND ExecutionStatus="Running" AND StartTime < "<release ${n} deploy time>"'\` is 0`
  );
}

/** The deletion itself: `deprecatePatch(id)` in one release, then the branch and the call removed in the next. */
const PATCH_REMOVAL = 'then deprecatePatch in one release, delete the old branch in the next';

export const DROP_LIST: readonly CompatibilityMeasure[] = [
  {
    id: Patch.RequestSchema,
    patch: true,
    introducedIn: 2,
    keepsWorking: 'runs started by release 1 (they checked only the rollout options, and failed before recording anything)',
    keepsAlive: ['src/workflows/releases/release-two.ts: checkRequest without the patch, releaseOneOptions'],
    dropWhen: `with ${Patch.LocalSteps}: it is checked only inside the frozen release-two.ts, which is never edited, so it goes when that module goes`,
  },
  {
    id: Patch.AdmissionBackoff,
    patch: true,
    introducedIn: 2,
    keepsWorking:
      'runs queued under release 1 (fixed re-check interval, no continue-as-new); checked at every re-check, so such a run switches at its first re-check on a later release',
    keepsAlive: ['src/workflows/admission-gate.ts: awaitAdmission, the fixed-interval branch (`schedule.firstSeconds` when not patched)'],
    dropWhen: `${noRunStartedBefore(2)}, and ${Patch.LocalSteps} dropped (release-two.ts calls awaitAdmission); ${PATCH_REMOVAL}`,
  },
  {
    id: Patch.LocalSteps,
    patch: true,
    introducedIn: 3,
    keepsWorking: 'runs started by releases 1-2: checked once, at the start of a run, and such a run finishes the release-2 way',
    keepsAlive: [
      'src/workflows/releases/release-two.ts: releaseTwoTrajectory (the whole module, frozen)',
      'src/workflows/trajectory.ts: trajectory, the `!patched(Patch.LocalSteps)` dispatch to release-two.ts',
      'src/activities/releases/index.ts: releaseTwoActivities, registered by createCpuActivities (src/activities/index.ts)',
      "src/activities/releases/verify.ts: verify (release 2's separate verify step)",
      "src/activities/releases/append-feedback.ts: appendFeedback (release 2's separate feedback step)",
      'src/workflows/trajectory-state.ts: TrajectoryState, phase `feedback` and the release-2 meaning of `turn`',
    ],
    dropWhen:
      `${noRunStartedBefore(3)}; ${PATCH_REMOVAL}. The replay histories of releases 1-2 (test/replay/histories/ without r3/r4 prefix) and ` +
      'the deploy test over r1/r2 go with it (their manifest entries in test/frozen/frozen-artefacts.json are removed in the same change)',
  },
  {
    id: Patch.StoredOutcome,
    patch: true,
    introducedIn: 4,
    keepsWorking: 'runs started by release 3 whose persist or failure record is in their history without the patch',
    keepsAlive: [
      'src/workflows/trajectory.ts: trajectory, the cancellable persist (`persist()` when not patched)',
      'src/workflows/trajectory.ts: trajectory, the catch block ending as the failure says without reading the stored row',
    ],
    dropWhen: `${noRunStartedBefore(4)}; ${PATCH_REMOVAL}`,
  },
  {
    id: Patch.Environments,
    patch: true,
    introducedIn: 5,
    keepsWorking:
      'runs started by releases 3-4: the math or code loop of the seed, judged by success alone (no environment, no `done`, rewards from success)',
    keepsAlive: [
      'src/workflows/episode.ts: seedSteps, the tokenizePrompt and environmentStep calls without an environment',
      'src/workflows/trajectory.ts: shapedRewards, shapeReward for turns recorded without a reward',
      'src/activities/tokenize-prompt.ts: firstTokens, the math or code prompt when no environment is named',
      'src/activities/environment-step.ts: resultOf, the seed feedback and ±1 reward of turns judged without an environment step',
    ],
    dropWhen: `${noRunStartedBefore(5)}; ${PATCH_REMOVAL}`,
  },
  {
    id: Patch.TurnAffinity,
    patch: true,
    introducedIn: 5,
    keepsWorking: 'runs started by releases 3-4: every turn on the shared GPU queue',
    keepsAlive: ['src/workflows/episode.ts: sharedGenerator, every turn on the shared queue when not patched'],
    dropWhen: `${noRunStartedBefore(5)}; ${PATCH_REMOVAL}`,
  },
  {
    id: Patch.BoundedEnvironments,
    patch: true,
    introducedIn: 6,
    keepsWorking:
      'runs started by release 5: environment code unbounded (retried without end in-process, five attempts of 300 s on its own worker), a timeout typed WorkerLost, an unserved environment waited on',
    keepsAlive: [
      'src/workflows/episode.ts: inProcessSteps, the cpu or sandboxed steps when `bounds` is undefined',
      'src/workflows/activity-presets.ts: remoteEnvironmentRelease5',
      'src/activities/environment-call.ts: boundedEnvironmentCall, the unbounded call when `bounds` is undefined',
    ],
    dropWhen: `${noRunStartedBefore(6)}; ${PATCH_REMOVAL}`,
  },
  {
    id: Patch.ReleaseSeven,
    patch: true,
    introducedIn: 7,
    keepsWorking:
      'runs started by releases 3-6, which recorded a marker per change (local-steps, turn-affinity, environments, bounded-environments at the start, stored-outcome at the end, admission-backoff at each re-check) and ask for each where they recorded it',
    keepsAlive: [
      'src/workflows/trajectory.ts: releaseOf, the per-change `patched` calls after the release-7 branch',
      'src/workflows/admission-gate.ts: awaitAdmission, the default `backsOff` that asks at each re-check',
    ],
    dropWhen: `the per-change calls go when ${noRunStartedBefore(7)}; the release-7 id itself stays as long as any release-7 run can be open, and a later release adds its own id, checked first`,
  },
  {
    id: 'token-heartbeats',
    patch: false,
    introducedIn: 2,
    keepsWorking: 'generate attempts of release-1 GPU workers, which heartbeated the tokens themselves: a retry on a later worker resumes from them',
    keepsAlive: [
      'src/activities/releases/token-heartbeats.ts: decodePartialOutput, encodePartialOutput (the GPU-worker benchmark and tests encode with it)',
      'src/activities/partial-output.ts: readHeartbeat, its fallback to decodePartialOutput',
      'src/activities/turn-checkpoint.ts: resumeTurn, the carried tokens',
      'src/store/write/turn-checkpoints.ts: claimTurnCheckpoint, `carried`',
    ],
    dropWhen: `every GPU worker runs release 2 or later, and ${noRunStartedBefore(2)} (a turn a release-1 worker began can only be retried within its run)`,
  },
  {
    id: 'untyped-failures',
    patch: false,
    introducedIn: 2,
    keepsWorking: 'failures of release-1 runs, which carry a message and no type',
    keepsAlive: ['src/trajectory/failure.ts: failureOf, LEGACY_MESSAGES (read by persistFailure and by RolloutClient results)'],
    dropWhen: `${noRunStartedBefore(2)}, and no closed release-1 run is still read by a client (Temporal's retention period has passed since the last one closed)`,
  },
  {
    id: 'temperature-only-sampling',
    patch: false,
    introducedIn: 4,
    keepsWorking:
      'GPU workers of releases 1-3 (they read only `temperature`), and runs of releases 1-3 (options resolved and generate inputs recorded without the other sampling parameters)',
    keepsAlive: [
      'src/activities/generate.ts: GenerateInput.temperature, and `samplingOf({ temperature })` when `sampling` is absent',
      'src/workflows/trajectory.ts: trajectory, `temperature` sent beside `sampling`',
      "src/trajectory/sampling.ts: samplingOf, the seed's values for parameters an earlier release did not resolve",
      'src/store/write/trajectory-store.ts: CompletedTrajectory.sampling optional (columns left NULL)',
    ],
    dropWhen: `every GPU worker runs release 4 or later (for \`temperature\`), and ${noRunStartedBefore(4)} (for the fallbacks)`,
  },
];
