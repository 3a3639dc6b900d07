import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities/index.js';
import type { EnvironmentPlacement } from '../activities/check-request.js';
import type { EnvironmentStepResult } from '../activities/environment-step.js';
import type { TokenizedPrompt } from '../activities/tokenize-prompt.js';
import type { JsonValue } from '../environments/environment.js';
import type { RolloutOptions } from '../trajectory/options.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { stoppedWithoutEos, type FinishReason } from '../trajectory/turn.js';
import type { TrajectoryRequest } from './trajectory-state.js';

const retry = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const;
const cpu = proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '20s', retry });
// A step that runs code (a code answer's tests, a tool call) gets a sandbox's time: up to two minutes.
const sandboxed = proxyLocalActivities<CpuActivities>({ startToCloseTimeout: '120s', retry });

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

/** One episode's environment, as the trajectory workflow sees it: a start, then a step per turn. */
export interface EpisodeEnvironment {
  start(): Promise<TokenizedPrompt>;
  step(turn: number, finishReason: FinishReason, state: JsonValue | undefined): Promise<EnvironmentStepResult>;
}

/**
 * The request's environment (release 5). A built-in or worker-given one runs in the CPU worker, as local activities;
 * any other runs on its own task queue, each reset and step a retried, recorded activity (its worker heartbeats, so a
 * killed one is noticed within `environmentHeartbeatSeconds`), kept and tokenized by the CPU worker's steps.
 */
export function episodeEnvironment(
  request: TrajectoryRequest, placement: EnvironmentPlacement, options: RolloutOptions, timeouts: Partial<ResolvedTrajectoryTimeouts>,
): EpisodeEnvironment {
  const { trajectoryId, qid, problem, gold } = request;
  const environment = placement.name;
  const task = {
    trajectoryId, qid, problem, gold, extraction: options.answerExtraction,
    ...(request.code ? { code: request.code } : {}), ...(request.environmentArgs ? { args: request.environmentArgs } : {}),
  };
  const stepLocally = environment === 'math' ? cpu : sandboxed;
  if (placement.taskQueue === undefined) {
    return {
      start: () => cpu.tokenizePrompt({ ...task, environment }),
      step: (turn, finishReason, state) => stepLocally.environmentStep({
        ...task, turn, environment, finishReason, outputHadEos: !stoppedWithoutEos(finishReason), ...(state === undefined ? {} : { state }),
      }),
    };
  }
  const remote = proxyActivities<RemoteEnvironmentActivities>({
    taskQueue: placement.taskQueue,
    startToCloseTimeout: `${timeouts.environmentStepSeconds ?? 300}s`,
    heartbeatTimeout: `${timeouts.environmentHeartbeatSeconds ?? 10}s`,
    retry: { ...retry, maximumAttempts: 5 },
  });
  const remoteTask: RemoteTask = { trajectoryId, qid, environment, problem, gold, args: request.environmentArgs ?? null, seed: placement.seed };
  return {
    start: async () => cpu.tokenizePrompt({ trajectoryId, problem, started: await remote.environmentReset(remoteTask) }),
    step: async (turn, finishReason, state) => {
      const { text } = await cpu.answerText({ trajectoryId, turn });
      const taken = await remote.environmentStep({ ...remoteTask, turn, text, finishReason, state: state ?? null });
      return cpu.environmentStep({ trajectoryId, turn, gold, environment, outputHadEos: !stoppedWithoutEos(finishReason), taken });
    },
  };
}
