import { ApplicationFailure, condition, defineSignal, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import type { GroupStatus } from '../admission/group-membership.js';
import { Patch } from './releases/patches.js';

/** Sent by the admission controller to every member of a group it admits. */
export const admittedSignal = defineSignal('admitted');

/** How often a queued trajectory asks whether its group was admitted, when no signal came. */
export interface RecheckSchedule {
  /** The first wait, in seconds; each later one doubles, up to `maxSeconds`. */
  firstSeconds: number;
  maxSeconds: number;
  /** Re-checks in one workflow run before it continues as new (sooner when Temporal suggests it). */
  perRun: number;
}

/** Carried across continue-as-new: how far the back-off has gone, so a new run does not start it over. */
export interface QueuedContinuation {
  recheck: number;
}

/**
 * Holds a trajectory until its group is admitted under the run's staleness bound. The signal is the fast path;
 * the re-check covers a controller that died between admitting a group and telling its members. Returns
 * 'continue' when this run has waited long enough and should continue as new to keep its history small.
 */
export async function awaitAdmission(
  joinGroup: () => Promise<{ status: GroupStatus }>,
  schedule: RecheckSchedule,
  continued: QueuedContinuation | undefined,
  // Release 7's runs back off by their release marker; earlier runs ask at each re-check, where they recorded it.
  backsOff: () => boolean = () => patched(Patch.AdmissionBackoff),
): Promise<'admitted' | { continueFrom: QueuedContinuation }> {
  let signalled = false;
  setHandler(admittedSignal, () => {
    signalled = true;
  });
  for (let recheck = continued?.recheck ?? 0, inThisRun = 1; ; recheck++, inThisRun++) {
    const { status } = await joinGroup();
    if (status === 'admitted') return 'admitted';
    if (status === 'cancelled') throw ApplicationFailure.nonRetryable('the group was cancelled before it was admitted', 'GroupCancelled');
    // A wait recorded by release 1 replays with its fixed interval; from the first live re-check on, it backs off.
    const backoff = backsOff();
    const seconds = backoff ? recheckSeconds(schedule, recheck) : schedule.firstSeconds;
    if (await condition(() => signalled, `${seconds}s`)) return 'admitted';
    // The next run's first step is the re-check this one would have made.
    if (backoff && (inThisRun >= schedule.perRun || workflowInfo().continueAsNewSuggested)) return { continueFrom: { recheck: recheck + 1 } };
  }
}

/**
 * The wait before re-check n: doubling from the first to the cap, spread ±20% at random (deterministic: the
 * workflow's seeded Math.random), so that thousands of trajectories submitted together do not re-check together.
 */
function recheckSeconds(schedule: RecheckSchedule, recheck: number): number {
  const backedOff = Math.min(schedule.maxSeconds, schedule.firstSeconds * 2 ** Math.min(recheck, 30));
  return Math.max(0.001, Math.round(backedOff * (0.8 + 0.4 * Math.random()) * 1000) / 1000);
}
