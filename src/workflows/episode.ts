import { ActivityFailure, ApplicationFailure, proxyActivities, proxyLocalActivities, TimeoutFailure } from '@temporalio/workflow';
import { TimeoutType } from '@temporalio/common';
import type { CpuActivities, GpuActivities } from '../activities/index.js';
import type { EnvironmentPlacement } from '../activities/check-request.js';
import type { EnvironmentStepResult } from '../activities/environment-step.js';
import type { GenerateInput, GenerateResult } from '../activities/generate.js';
import type { TokenizedPrompt } from '../activities/tokenize-prompt.js';
import type { EnvironmentBounds } from '../environments/bounds.js';
import type { JsonValue } from '../environments/environment.js';
import type { RolloutOptions } from '../trajectory/options.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { FailureType } from '../trajectory/failure.js';
import { stoppedWithoutEos, type FinishReason } from '../trajectory/turn.js';
import { Presets } from './activity-presets.js';
import { agentEpisode } from './agent-episode.js';
import { turnGenerator } from './turn-affinity.js';
import type { TrajectoryRequest } from './trajectory-state.js';

/**
 * One trajectory's episode, as the turn loop sees it: how it starts, how each turn is generated, how the environment
 * answers it. Its parts are chosen once, when the run starts (`episodeOf`), by the request and by the release that
 * started the run, so the loop has one path: a release adds a part here, not a branch there.
 */
export interface Episode {
  /** The prompt's tokens stored; P_0 and the state the first step starts from. */
  start(): Promise<TokenizedPrompt>;
  /** One turn on the GPU queue (or on the server that generated the turn before). */
  generate(input: GenerateInput): Promise<GenerateResult>;
  /** The environment's answer to the turn just generated. */
  step(turn: number, finishReason: FinishReason, state: JsonValue | undefined): Promise<EnvironmentStepResult>;
}

/** What the run's release decided, once, at its start (`patched` ids in src/workflows/releases/patches.ts). */
export interface EpisodeRelease {
  /** Release 5: the episode runs in the environment the request names (absent: release 3–4's math or code steps). */
  environments: boolean;
  /** Release 5: turn affinity (and the request did not turn it off). */
  affinity: boolean;
  /** Release 6: every environment's code bounded and typed the same way, whatever its language. */
  boundedEnvironments: boolean;
  /**
   * Release 4: the stored row decides how the workflow ends. Asked when the trajectory ends, because runs of
   * releases 4–6 recorded its marker there.
   */
  storedOutcome(): boolean;
  /** Release 2: a queued trajectory backs off its re-checks. Asked at each re-check, where earlier runs recorded it. */
  admissionBackoff(): boolean;
}

export interface EpisodeInput {
  request: TrajectoryRequest;
  options: RolloutOptions;
  timeouts: ResolvedTrajectoryTimeouts;
  environment: EnvironmentPlacement | undefined;
}

const cpu = proxyLocalActivities<CpuActivities>(Presets.cpuStep);
const sandboxed = proxyLocalActivities<CpuActivities>(Presets.sandboxStep);

/** The episode's parts: a start and a step (release 3–4's, an in-process or a remote environment's) and a generator. */
export function episodeOf(input: EpisodeInput, release: EpisodeRelease): Episode {
  const generate = release.affinity ? turnGenerator(input.timeouts) : sharedGenerator(input.timeouts);
  const { environment } = input;
  if (!release.environments || environment === undefined) return { ...seedSteps(input), generate };
  // Release 8: only its own workers mark a placement as an agent program, so no run of an earlier release gets here.
  if (environment.agentProgram) return agentEpisode(input, generate);
  if (release.boundedEnvironments && environment.unserved !== undefined) {
    // A name nothing serves: say so now, instead of waiting on a task queue no worker polls.
    const unserved = ApplicationFailure.nonRetryable(environment.unserved, FailureType.UnknownEnvironment);
    return { start: () => Promise.reject(unserved), step: () => Promise.reject(unserved), generate };
  }
  const bounds = release.boundedEnvironments ? Presets.environmentBounds(input.timeouts, environment.slowSteps ?? false) : undefined;
  const steps =
    environment.taskQueue === undefined ? inProcessSteps(input, environment, bounds) : remoteSteps(input, environment, environment.taskQueue, bounds);
  return { ...steps, generate };
}

type Steps = Pick<Episode, 'start' | 'step'>;

function sharedGenerator(timeouts: ResolvedTrajectoryTimeouts): Episode['generate'] {
  const gpu = proxyActivities<GpuActivities>(Presets.generation(timeouts));
  // Without turn affinity the next turn may start on any server, so none keeps a slot for it (`moreTurns` unset):
  // a kept slot would stand idle for RETURNING_TURN_HOLD_MS and hold the trajectory's own next turn back with it.
  return (input) => gpu.generate({ ...input, moreTurns: undefined });
}

/** Releases 3–4: the math prompt and verifier, or a code task's prompt and judge; no environment named. */
function seedSteps({ request, options }: EpisodeInput): Steps {
  const { trajectoryId, problem, gold, code } = request;
  return {
    start: () => cpu.tokenizePrompt({ trajectoryId, problem, code: code !== undefined }),
    step: (turn, finishReason) =>
      (code ? sandboxed : cpu).environmentStep({
        trajectoryId,
        turn,
        gold,
        outputHadEos: !stoppedWithoutEos(finishReason),
        extraction: options.answerExtraction,
        ...(code ? { code } : {}),
      }),
  };
}

/** The request's fields an environment's steps read. */
function taskOf({ request, options }: EpisodeInput) {
  const { trajectoryId, qid, problem, gold } = request;
  return {
    trajectoryId,
    qid,
    problem,
    gold,
    extraction: options.answerExtraction,
    ...(request.code ? { code: request.code } : {}),
    ...(request.environmentArgs ? { args: request.environmentArgs } : {}),
  };
}

/**
 * A built-in or worker-given environment, run in the CPU worker as local activities. Release 6 bounds its code
 * (attempts and deadline, counted by the activity); release 5 ran it unbounded, with the sandbox's timeout for any
 * environment but `math`.
 */
function inProcessSteps(input: EpisodeInput, placement: EnvironmentPlacement, bounds: EnvironmentBounds | undefined): Steps {
  const task = taskOf(input);
  const environment = placement.name;
  const stepper = bounds ? proxyLocalActivities<CpuActivities>(Presets.environmentStep(bounds)) : placement.name === 'math' ? cpu : sandboxed;
  const bounded = bounds ? { bounds } : {};
  return {
    start: () => (bounds ? stepper : cpu).tokenizePrompt({ ...task, environment, ...bounded }),
    step: (turn, finishReason, state) =>
      stepper.environmentStep({
        ...task,
        turn,
        environment,
        finishReason,
        outputHadEos: !stoppedWithoutEos(finishReason),
        ...(state === undefined ? {} : { state }),
        ...bounded,
      }),
  };
}

/**
 * What an environment served on its own task queue answers (Python's `ratchet-env serve`): plain JSON, checked by
 * the CPU worker's steps that keep it (src/environments/step-result.ts).
 */
export interface RemoteEnvironmentActivities {
  environmentReset(input: RemoteTask): Promise<unknown>;
  environmentStep(input: RemoteTask & { turn: number; text: string; finishReason: FinishReason; state: JsonValue | null }): Promise<unknown>;
}

interface RemoteTask {
  trajectoryId: string;
  qid: string;
  environment: string;
  problem: string;
  gold: string[];
  args: TrajectoryRequest['environmentArgs'] | null;
  seed: number;
}

/**
 * An environment on its own task queue: each reset and step a retried, recorded activity on its worker, kept and
 * tokenized by the CPU worker's steps. Release 6 gives it the same attempts and deadline as in-process code, and
 * names what a timeout means: a deadline passed (`EnvironmentTimeout`) or heartbeats stopped (`EnvironmentWorkerLost`).
 */
function remoteSteps(input: EpisodeInput, placement: EnvironmentPlacement, taskQueue: string, bounds: EnvironmentBounds | undefined): Steps {
  const { request, timeouts } = input;
  const { trajectoryId, qid, problem, gold } = request;
  const environment = placement.name;
  const remote = proxyActivities<RemoteEnvironmentActivities>(
    bounds ? Presets.remoteEnvironment(bounds, timeouts, taskQueue) : Presets.remoteEnvironmentRelease5(timeouts, taskQueue),
  );
  const typed = bounds ? typedTimeouts(environment, bounds) : <T>(call: Promise<T>) => call;
  const remoteTask: RemoteTask = { trajectoryId, qid, environment, problem, gold, args: request.environmentArgs ?? null, seed: placement.seed };
  return {
    start: async () => cpu.tokenizePrompt({ trajectoryId, problem, started: await typed(remote.environmentReset(remoteTask)) }),
    step: async (turn, finishReason, state) => {
      const { text } = await cpu.answerText({ trajectoryId, turn });
      const taken = await typed(remote.environmentStep({ ...remoteTask, turn, text, finishReason, state: state ?? null }));
      return cpu.environmentStep({ trajectoryId, turn, gold, environment, outputHadEos: !stoppedWithoutEos(finishReason), taken });
    },
  };
}

/** A remote call's timeouts, typed by what they mean; every other failure passes as its worker typed it. */
function typedTimeouts(environment: string, bounds: EnvironmentBounds) {
  return async <T>(call: Promise<T>): Promise<T> => {
    try {
      return await call;
    } catch (error) {
      const timeout = error instanceof ActivityFailure && error.cause instanceof TimeoutFailure ? error.cause : undefined;
      if (timeout?.timeoutType === TimeoutType.START_TO_CLOSE) {
        throw ApplicationFailure.nonRetryable(
          `environment ${environment} did not answer within ${bounds.seconds} s on any of ${bounds.attempts} attempts (environmentStepSeconds)`,
          FailureType.EnvironmentTimeout,
        );
      }
      if (timeout?.timeoutType === TimeoutType.HEARTBEAT) {
        throw ApplicationFailure.nonRetryable(
          `environment ${environment}'s worker stopped heartbeating on ${bounds.attempts} attempts (environmentHeartbeatSeconds)`,
          FailureType.EnvironmentWorkerLost,
        );
      }
      throw error;
    }
  };
}
