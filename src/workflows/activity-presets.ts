import type { ActivityOptions, LocalActivityOptions, RetryPolicy } from '@temporalio/common';
import type { ChildWorkflowOptions } from '@temporalio/workflow';
import { ENVIRONMENT_ATTEMPTS, SLOW_STEP_SECONDS, type EnvironmentBounds } from '../environments/bounds.js';
import type { ResolvedTrajectoryTimeouts } from '../trajectory/timeouts.js';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../task-queues.js';

/**
 * Every activity option the trajectory workflow uses, declared once, each with its reason. Retries back off from
 * 1 s, doubling, to 30 s; what cannot succeed fails typed and non-retryable inside the activity, so an unlimited
 * retry only ever repeats what another attempt may fix (a lost connection to Postgres or an inference server).
 */
export const RETRY = { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' } as const satisfies RetryPolicy;

type Timeouts = Pick<ResolvedTrajectoryTimeouts, 'generateStartToCloseSeconds' | 'generateHeartbeatSeconds'> & Partial<ResolvedTrajectoryTimeouts>;

/** Runs an agent program gets: a crash or a kill is run again (its calls answered from the store) until this many have failed. */
export const AGENT_PROGRAM_ATTEMPTS = 3;

/** Margin a local step needs beyond the environment's own deadline: its reads and writes in Postgres. */
const STORE_MARGIN_SECONDS = 30;

export const Presets = {
  /**
   * A CPU step (milliseconds each: check, tokenize, a math verdict), run as a local activity in the worker that runs
   * the workflow: one marker event, no task queue round trip. Idempotent, so re-running it after a crash is harmless.
   */
  cpuStep: { startToCloseTimeout: '20s', retry: RETRY } satisfies LocalActivityOptions,
  /** Persisting a finished trajectory: never given up, retried until Postgres takes it (or rejects it for good). */
  store: { startToCloseTimeout: '30s', retry: RETRY } satisfies LocalActivityOptions,
  /** A step that runs code (a code answer's tests, a tool call): a sandbox's time, up to two minutes. Releases 3–5. */
  sandboxStep: { startToCloseTimeout: '120s', retry: RETRY } satisfies LocalActivityOptions,
  /** Recording a failure: a regular activity, so it happens even while the workflow is being cancelled. */
  failureRecord: { taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '30s', retry: RETRY } satisfies ActivityOptions,

  /**
   * Generation on the shared GPU queue: long; the heartbeat timeout is how fast a dead GPU worker is noticed. Twenty
   * attempts: a turn resumes from its checkpoint, so a retry costs little, but a server that fails every time must end.
   */
  generation: (t: Timeouts) =>
    ({
      taskQueue: GPU_TASK_QUEUE,
      startToCloseTimeout: `${t.generateStartToCloseSeconds}s`,
      heartbeatTimeout: `${t.generateHeartbeatSeconds}s`,
      retry: { ...RETRY, maximumAttempts: 20 },
    }) satisfies ActivityOptions,
  /**
   * A turn on the queue of the server that generated the one before (turn affinity): one attempt, and only
   * `affinityFallbackSeconds` to start; whatever would be retried goes to the shared queue instead.
   */
  ownServerGeneration: (t: Timeouts, taskQueue: string) =>
    ({
      ...Presets.generation(t),
      taskQueue,
      scheduleToStartTimeout: `${t.affinityFallbackSeconds ?? 2}s`,
      retry: { ...RETRY, maximumAttempts: 1 },
    }) satisfies ActivityOptions,

  /**
   * The bounds an environment's own code runs under (release 6), the same in every language: `ENVIRONMENT_ATTEMPTS`
   * attempts of `environmentStepSeconds` each, or the sandbox's two minutes for a slow built-in.
   */
  environmentBounds: (t: Partial<ResolvedTrajectoryTimeouts>, slowSteps: boolean): EnvironmentBounds => ({
    attempts: ENVIRONMENT_ATTEMPTS,
    seconds: Math.max(t.environmentStepSeconds ?? 60, slowSteps ? SLOW_STEP_SECONDS : 0),
  }),
  /**
   * An in-process environment's reset or step (release 6): the activity bounds the environment's code itself (it
   * counts attempts and holds the deadline), so a retry here still repeats only what Postgres or a crash broke.
   */
  environmentStep: (bounds: EnvironmentBounds) =>
    ({ startToCloseTimeout: `${bounds.seconds + STORE_MARGIN_SECONDS}s`, retry: RETRY }) satisfies LocalActivityOptions,
  /**
   * A reset or step on an environment's own worker (Python's `ratchet-env serve`): the same attempts and deadline
   * as in-process; its worker heartbeats, so a killed one is noticed within `environmentHeartbeatSeconds`.
   */
  remoteEnvironment: (bounds: EnvironmentBounds, t: Partial<ResolvedTrajectoryTimeouts>, taskQueue: string) =>
    ({
      taskQueue,
      startToCloseTimeout: `${bounds.seconds}s`,
      heartbeatTimeout: `${t.environmentHeartbeatSeconds ?? 10}s`,
      retry: { ...RETRY, maximumAttempts: bounds.attempts },
    }) satisfies ActivityOptions,
  /**
   * An agent program's run, a regular activity on the CPU queue (it runs the whole episode, far past a workflow task):
   * `AGENT_PROGRAM_ATTEMPTS` runs of `agentProgramSeconds` each; the worker heartbeats every 2 s, so a lost one is
   * noticed in 30. The program's own bound is kept by the activity (it kills the program at its deadline).
   */
  agentProgram: (t: Partial<ResolvedTrajectoryTimeouts>) =>
    ({
      taskQueue: CPU_TASK_QUEUE,
      startToCloseTimeout: `${(t.agentProgramSeconds ?? 1800) + STORE_MARGIN_SECONDS}s`,
      heartbeatTimeout: '30s',
      retry: { ...RETRY, maximumAttempts: AGENT_PROGRAM_ATTEMPTS },
    }) satisfies ActivityOptions,
  /**
   * Opening an agent workflow's run on a CPU worker's endpoint (a URL and a key): milliseconds, on any CPU worker (all
   * register the same programs); a few attempts for a worker going away meanwhile.
   */
  agentEndpoint: { taskQueue: CPU_TASK_QUEUE, startToCloseTimeout: '10s', retry: { ...RETRY, maximumAttempts: 5 } } satisfies ActivityOptions,
  /**
   * An agent workflow's run, the trajectory's child on the user's task queue: `agentProgramSeconds` for the run, as a
   * process gets; no retry by Temporal, since a run again needs a new endpoint run (the episode counts its runs);
   * terminated with the trajectory, whose turns it would otherwise go on asking for.
   */
  agentWorkflow: (t: Partial<ResolvedTrajectoryTimeouts>, taskQueue: string) =>
    ({
      taskQueue,
      workflowRunTimeout: `${t.agentProgramSeconds ?? 1800}s`,
      parentClosePolicy: 'TERMINATE',
      retry: { maximumAttempts: 1 },
    }) satisfies ChildWorkflowOptions,
  /** Release 5's remote environment options (five attempts of `environmentStepSeconds`, default then 300 s). */
  remoteEnvironmentRelease5: (t: Partial<ResolvedTrajectoryTimeouts>, taskQueue: string) =>
    ({
      taskQueue,
      startToCloseTimeout: `${t.environmentStepSeconds ?? 300}s`,
      heartbeatTimeout: `${t.environmentHeartbeatSeconds ?? 10}s`,
      retry: { ...RETRY, maximumAttempts: 5 },
    }) satisfies ActivityOptions,
} as const;
