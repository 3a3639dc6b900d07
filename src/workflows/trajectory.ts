import {
  ApplicationFailure,
  CancellationScope,
  ContinueAsNew,
  continueAsNew,
  isCancellation,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { SearchAttributeUpdatePair } from '@temporalio/common';
import type { CpuActivities } from '../activities/index.js';
import type { EnvironmentStepResult } from '../activities/environment-step.js';
import type { PersistFailureResult } from '../activities/persist.js';
import type { PackingLayout, RolloutOptions } from '../trajectory/options.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { returnsToGo, shapeEnvironmentReward, shapeReward } from '../trajectory/rewards.js';
import { samplingOf } from '../trajectory/sampling.js';
import type { EndReason, TurnRecord } from '../trajectory/turn.js';
import { FailureType, type TrajectoryFailure } from '../trajectory/failure.js';
import type { TrajectoryIdentity } from '../trajectory/identity.js';
import { Presets } from './activity-presets.js';
import { episodeOf, type EpisodeRelease } from './episode.js';
import { awaitAdmission, type QueuedContinuation, type RecheckSchedule } from './admission-gate.js';
import { Patch } from './releases/patches.js';
import { POLICY_VERSION, QID, STATUS, SUCCESSES, TURN } from '../temporal/search-attributes.js';
import { trajectoryFailure } from './trajectory-failure.js';
import { stateQuery, type TrajectoryRequest, type TrajectoryResult, type TrajectoryState } from './trajectory-state.js';

const cpu = proxyLocalActivities<CpuActivities>(Presets.cpuStep);
const store = proxyLocalActivities<CpuActivities>(Presets.store);
const failures = proxyActivities<CpuActivities>(Presets.failureRecord);

/**
 * One trajectory: an episode of up to N turns in its environment (math, code, a tool or a game), each turn generated
 * on the GPU queue and answered by the environment with observations and a reward. How the episode starts, generates
 * and steps is chosen once, when the run starts (src/workflows/episode.ts); the loop below has one path.
 * `continued` is set when a queued trajectory continued as new to keep its history short.
 */
export async function trajectory(input: TrajectoryRequest, continued?: QueuedContinuation): Promise<TrajectoryResult> {
  const releaseSeven = patched(Patch.ReleaseSeven);
  if (!releaseSeven && !patched(Patch.LocalSteps)) {
    // Runs started by releases 1 and 2 finish as they started; the module is evaluated only for them.
    const { releaseTwoTrajectory } = await import(/* webpackMode: "eager" */ './releases/release-two.js');
    return releaseTwoTrajectory(input, continued);
  }
  // The `state` query answers from the first activation on, not only once the request has been checked.
  const state = answerStateQuery();
  const checked = await cpu.checkRequest({ request: input, workflowId: workflowInfo().workflowId });
  if ('invalid' in checked) {
    // The query is answered from the first activation, so a rejected request must not read as still tokenizing.
    state.phase = 'failed';
    return rejectInvalid(input, ApplicationFailure.nonRetryable(checked.invalid, FailureType.InvalidRequest));
  }
  const request = input;
  const { options, timeouts } = checked;
  // Options an earlier release resolved hold only the temperature; the seed's values fill the rest.
  const sampling = samplingOf(options);
  const release = releaseOf(options, releaseSeven);
  const episode = episodeOf({ request, options, timeouts, environment: checked.environment }, release);
  // Release 5 names the environment on the row and keeps its reward with each turn.
  const environment = release.environments ? checked.environment?.name : undefined;
  const identity = {
    trajectoryId: request.trajectoryId,
    qid: request.qid,
    taskId: request.taskId,
    birthTime: Date.now(),
    layout: options.layout,
    ...(environment ? { environment } : {}),
  };
  const turns: TurnRecord[] = [];
  state.turns = options.turns;
  const header = startLiveState(request, checked.page);
  let endReason: EndReason = 'turns';
  try {
    // A trajectory is born when it may start generating, not when it was queued.
    if (request.group) identity.birthTime = await admission(request, timeouts, continued, state, release);
    let { promptLen: contextLen, state: environmentState } = await episode.start();
    for (let turn = 0; turn < options.turns; turn++) {
      Object.assign(state, { phase: 'generating', turn });
      // `temperature` too: a GPU worker of an earlier release reads only that.
      const output = await episode.generate({
        trajectoryId: request.trajectoryId,
        turn,
        contextLen,
        maxNewTokens: options.maxNewTokens,
        temperature: sampling.temperature,
        sampling,
        moreTurns: turn + 1 < options.turns,
      });
      if (output.contextExhausted) {
        endReason = contextExhausted(request.trajectoryId, turns);
        break;
      }
      state.phase = 'verifying';
      const step = await episode.step(turn, output.finishReason, environmentState);
      environmentState = step.state;
      const kept = environment ? { reward: step.reward, done: step.done } : {};
      turns.push({ turn, contextLen, ...output, verdict: step.status, success: step.success, feedbackLen: step.feedbackLen, ...kept });
      // An agent program's fork starts the next turn from tokens of its own (release 8); otherwise the context grows.
      contextLen = step.contextLen ?? contextLen + output.outputLen + step.feedbackLen;
      reportTurn(state, header, turns, step);
      const ended = step.done ? 'done' : options.earlyStop && step.success ? 'early_stop' : undefined;
      if (ended) {
        endReason = ended;
        break;
      }
    }

    const { rawRewards, rewards } = shapedRewards(turns, options);
    state.phase = 'persisting';
    const persist = () => store.persistTrajectory({ ...identity, endReason, turns, rewards, rawRewards, sampling });
    await (release.storedOutcome() ? CancellationScope.nonCancellable(persist) : persist());
    return completed(request, options.layout, endReason, turns, rewards, state);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    return endFailed(error, identity, turns, state, release, () =>
      completed(request, options.layout, endReason, turns, shapedRewards(turns, options).rewards, state),
    );
  }
}

/**
 * What a person sees without reading history, besides the `state` query: the workflow's details (what the
 * trajectory is, a link to its page, however the workflow was started), and the search attributes Ratchet's client
 * sets at start, set here when something else started the workflow.
 */
function startLiveState(request: TrajectoryRequest, page: string | undefined): string {
  const header = detailsHeader(request, page);
  setCurrentDetails(header);
  if (workflowInfo().typedSearchAttributes.get(QID) !== request.qid) {
    upsertSearchAttributes([
      { key: QID, value: request.qid },
      { key: STATUS, value: request.group ? 'queued' : 'running' },
    ]);
  }
  return header;
}

/** The live state, answered by the `state` query from here on (queries add nothing to history). */
function answerStateQuery(): TrajectoryState {
  const state: TrajectoryState = {
    phase: 'tokenizing',
    turn: 0,
    turns: 0,
    verdicts: [],
    lastAnswerTail: null,
    lastPredicted: null,
    policyVersion: null,
  };
  setHandler(stateQuery, () => state);
  return state;
}

/** Waits in the group's queue until the staleness bound admits it (or continues as new); returns its birth time. */
async function admission(
  request: TrajectoryRequest,
  timeouts: ResolvedTrajectoryTimeouts,
  continued: QueuedContinuation | undefined,
  state: TrajectoryState,
  release: EpisodeRelease,
): Promise<number> {
  state.phase = 'queued';
  const { trajectoryId, qid, group } = request;
  const joinGroup = () => cpu.joinGroupForAdmission({ trajectoryId, qid, group: group! });
  const admitted = await awaitAdmission(joinGroup, recheckSchedule(timeouts), continued, release.admissionBackoff);
  if (admitted !== 'admitted') return continueAsNew<typeof trajectory>(request, admitted.continueFrom);
  state.phase = 'tokenizing';
  upsertSearchAttributes([{ key: STATUS, value: 'running' }]);
  return Date.now();
}

/**
 * Records the failure as a failure (never as a zero reward), even when the workflow is being cancelled, and ends
 * the workflow as the stored row says: the row an earlier run of a step stored first is how it ended (RE-RUNS.md).
 */
async function endFailed(
  error: unknown,
  identity: TrajectoryIdentity,
  turns: TurnRecord[],
  state: TrajectoryState,
  release: EpisodeRelease,
  completedAsStored: () => TrajectoryResult,
): Promise<TrajectoryResult> {
  let failure = trajectoryFailure(error);
  const recorded = await recordFailure(identity, turns, failure);
  if (release.storedOutcome()) {
    if (recorded.existing === 'completed') return completedAsStored();
    if (recorded.existing === 'failed' && recorded.failureType)
      failure = { ...failure, failureType: recorded.failureType, failureClass: recorded.failureClass ?? failure.failureClass };
  }
  upsertSearchAttributes([{ key: STATUS, value: 'failed' }, ...progressAttributes(turns)]);
  state.phase = 'failed';
  if (isCancellation(error)) throw error;
  throw failedTrajectory(identity.trajectoryId, state.turn, turns, failure);
}

/** The stored trajectory's result, as the workflow returns it and `RolloutClient` reads it. */
function completed(
  request: TrajectoryRequest,
  layout: PackingLayout,
  endReason: EndReason,
  turns: TurnRecord[],
  rewards: number[],
  state: TrajectoryState,
): TrajectoryResult {
  state.phase = 'completed';
  upsertSearchAttributes([{ key: STATUS, value: 'completed' }, ...progressAttributes(turns)]);
  return {
    trajectoryId: request.trajectoryId,
    qid: request.qid,
    status: 'completed',
    endReason,
    layout,
    turns,
    rewards,
    outputTokens: sumOutput(turns),
  };
}

function shapedRewards(turns: TurnRecord[], options: RolloutOptions): { rawRewards: number[]; rewards: number[] } {
  // Release 5 keeps the environment's reward with each turn; earlier turns were ±1 by success (the same values for math).
  const rawRewards = turns.map((t) =>
    t.reward === undefined
      ? shapeReward(t.success, options.rewardBias, options.rewardScaling)
      : shapeEnvironmentReward(t.reward, options.rewardBias, options.rewardScaling),
  );
  return { rawRewards, rewards: returnsToGo(rawRewards, options.discount) };
}

/**
 * An invalid request still leaves a `failed` row, under the workflow id, so nothing submitted goes unaccounted; a
 * valid group section in it is passed along, so the member still counts in its group and its siblings can run.
 * (Only the activity's input changes, which replay does not compare: no patch needed.)
 */
async function rejectInvalid(input: unknown, invalid: ApplicationFailure): Promise<never> {
  const { qid, group } = (input ?? {}) as { qid?: unknown; group?: unknown };
  const trajectoryId = workflowInfo().workflowId;
  const failure = trajectoryFailure(invalid);
  await recordFailure({ trajectoryId, qid: typeof qid === 'string' ? qid : '', birthTime: Date.now(), layout: 'seed' }, [], failure, group);
  upsertSearchAttributes([{ key: STATUS, value: 'failed' }]);
  throw failedTrajectory(trajectoryId, 0, [], failure);
}

async function recordFailure(
  identity: TrajectoryIdentity,
  turns: TurnRecord[],
  failure: TrajectoryFailure,
  unjoinedGroup?: unknown,
): Promise<PersistFailureResult> {
  return CancellationScope.nonCancellable(() =>
    failures.persistFailure({
      ...identity,
      turnsDone: turns.length,
      error: failure.message,
      failureType: failure.failureType,
      failureClass: failure.failureClass,
      ...(unjoinedGroup === undefined ? {} : { unjoinedGroup }),
    }),
  );
}

/** The workflow's own failure: typed `TrajectoryFailed`, with the finished turns and the cause's type and class. */
function failedTrajectory(trajectoryId: string, turn: number, turns: TurnRecord[], failure: TrajectoryFailure): ApplicationFailure {
  return ApplicationFailure.nonRetryable(`trajectory ${trajectoryId} failed at turn ${turn}: ${failure.message}`, 'TrajectoryFailed', {
    turns,
    failureType: failure.failureType,
    failureClass: failure.failureClass,
  });
}

/**
 * The run's release, decided at its start: each `patched` id is recorded by the run that first calls it, so a run
 * started by an earlier release keeps that release's parts to its end. A release-7 run recorded one marker, and
 * every change is on. Runs of releases 3–6 ask for each change where they recorded it: three ids here, two later
 * (`storedOutcome`, `admissionBackoff`). Releases 1–2 returned above.
 */
function releaseOf(options: RolloutOptions, releaseSeven: boolean): EpisodeRelease {
  if (releaseSeven) {
    const on = () => true;
    return { environments: true, affinity: options.turnAffinity !== false, boundedEnvironments: true, storedOutcome: on, admissionBackoff: on };
  }
  const affinity = patched(Patch.TurnAffinity);
  const environments = patched(Patch.Environments);
  return {
    environments,
    affinity: affinity && options.turnAffinity !== false,
    boundedEnvironments: environments && patched(Patch.BoundedEnvironments),
    storedOutcome: () => patched(Patch.StoredOutcome),
    admissionBackoff: () => patched(Patch.AdmissionBackoff),
  };
}

function recheckSchedule(timeouts: ResolvedTrajectoryTimeouts): RecheckSchedule {
  return {
    firstSeconds: timeouts.admissionRecheckSeconds,
    maxSeconds: timeouts.admissionRecheckMaxSeconds,
    perRun: timeouts.admissionRechecksPerRun,
  };
}

/** A context window with no room for another turn ends the episode; with no turn at all, the trajectory fails. */
function contextExhausted(trajectoryId: string, turns: TurnRecord[]): EndReason {
  if (turns.length === 0)
    throw ApplicationFailure.nonRetryable(`the prompt of ${trajectoryId} fills the context window`, FailureType.ContextExhausted);
  return 'context_exhausted';
}

/**
 * Live progress goes to the workflow's details and the `state` query, which cost no history event. The search
 * attributes are written once, when the trajectory ends (release 2 upserted them every turn: each upsert is a
 * history event and a visibility write, the largest per-turn cost the server had left).
 */
function reportTurn(state: TrajectoryState, header: string, turns: TurnRecord[], step: EnvironmentStepResult): void {
  const last = turns[turns.length - 1]!;
  Object.assign(state, {
    turn: turns.length,
    verdicts: turns.map((t) => t.verdict),
    lastAnswerTail: step.answerTail,
    lastPredicted: step.predicted,
    policyVersion: last.versionEnd,
  });
  const successes = turns.filter((t) => t.success).length;
  setCurrentDetails(
    `${header}\n\nturn ${turns.length}/${state.turns}: ${turns.map((t) => t.verdict).join(', ')} (${successes} succeeded), policy version ${last.versionEnd}`,
  );
}

function detailsHeader(request: TrajectoryRequest, page: string | undefined): string {
  const problem = request.problem.length > 120 ? `${request.problem.slice(0, 120)}…` : request.problem;
  return `${request.qid}: ${problem}${page ? `\n\n[Ratchet trajectory page](${page})` : ''}`;
}

/** `RatchetTurn` is the number of turns done, as the details count them (release 2 wrote the last turn's index). */
function progressAttributes(turns: TurnRecord[]): SearchAttributeUpdatePair[] {
  if (turns.length === 0) return [];
  return [
    { key: TURN, value: turns.length },
    { key: SUCCESSES, value: turns.filter((t) => t.success).length },
    { key: POLICY_VERSION, value: turns[turns.length - 1]!.versionEnd },
  ];
}

function sumOutput(turns: TurnRecord[]): number {
  return turns.reduce((sum, t) => sum + t.outputLen, 0);
}
