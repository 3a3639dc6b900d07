import { Worker, type NativeConnection, type WorkflowBundleOption } from '@temporalio/worker';
import type pg from 'pg';
import type { CodeSandboxPool } from '../code/index.js';
import type { Environment } from '../environments/environment.js';
import { createCpuActivities } from '../activities/index.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { VerifierPool } from '../verifier/index.js';
import { CPU_TASK_QUEUE } from '../task-queues.js';
import type { AgentHost } from './agent-host.js';
import { workflowBundle } from './workflow-bundle.js';
import { WORKER_SHUTDOWN_FORCE_TIME } from './shutdown-bound.js';

export interface CpuWorkerDeps {
  connection: NativeConnection;
  namespace: string;
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  verifier: VerifierPool;
  /** Where code answers run, like the verifier: one pool per worker process, injected. */
  sandbox: CodeSandboxPool;
  /** The user's own environments, run in-process beside the built-in ones (math, code, math-python-tool). */
  environments?: readonly Environment[];
  taskQueue?: string;
  /**
   * Trajectory workflows kept in memory between their steps (about 1.5 MB each). The SDK's default sizes the
   * cache to the heap (over 2,000 on a 4 GB heap): with thousands of trajectories queued for admission, the
   * worker's memory then grows by gigabytes. An evicted trajectory replays its short history on its next step.
   */
  maxCachedWorkflows?: number;
  /** Where `ratchet ui` serves trajectory pages: each workflow's details link to its page. */
  uiUrl?: string;
  /** The workflow code to run; the current release's unless given (the deploy test runs an earlier one). */
  workflowBundle?: WorkflowBundleOption;
  /** The agent programs it runs and the endpoint they call (src/workers/agent-host.ts); absent: none. */
  agentHost?: AgentHost;
}

/**
 * How long one workflow activation may run before the SDK's deadlock detector ends it. The detector is a V8
 * watchdog on wall-clock time: a CPU worker frozen mid-activation (SIGSTOP, a VM migration, a long GC pause)
 * past the SDK's 5 s default wakes up to a terminated script, and Node aborts the whole process with "async hook
 * stack has become corrupted" (temporalio/sdk-typescript#939, nodejs/node#38503), taking every in-flight
 * trajectory's activities with it. Our activations take milliseconds; a freeze is not a deadlock. The SDK lifts
 * the limit for the same reason in debugMode (a debugger pause is a freeze); the option is not in WorkerOptions'
 * type but the SDK applies it (worker-options.js, "not exposed at the moment").
 */
const ACTIVATION_DEADLOCK_TIMEOUT = '10 minutes';

/**
 * The SDK records a stack trace for every promise a workflow creates, only to answer the `__stack_trace` query
 * (the UI's stack trace tab): an Error built and mapped through the bundle's source map each time. It has no switch
 * (temporalio/sdk-typescript#1587); Ratchet's patch to it (patches/, applied by `npm install`) adds one, which the
 * CPU worker turns off unless the operator set it: 11 of the CPU worker's 80 ms per five-turn trajectory in
 * `bench:overhead`. The workflow thread reads it when it starts, inside `Worker.create`.
 */
export function workflowStackTraces(): void {
  process.env.TEMPORAL_WORKFLOW_STACK_TRACES ??= 'off';
}

/** The CPU worker: trajectory workflows plus tokenize, verify, feedback and persist activities. */
export async function createCpuWorker(deps: CpuWorkerDeps): Promise<Worker> {
  workflowStackTraces();
  const frozenActivationsSurvive = { isolateExecutionTimeout: ACTIVATION_DEADLOCK_TIMEOUT };
  return Worker.create({
    ...frozenActivationsSurvive,
    connection: deps.connection,
    namespace: deps.namespace,
    taskQueue: deps.taskQueue ?? CPU_TASK_QUEUE,
    workflowBundle: deps.workflowBundle ?? (await workflowBundle()),
    activities: createCpuActivities({ ...deps, agentPrograms: deps.agentHost?.programs }),
    maxConcurrentActivityTaskExecutions: 64,
    maxCachedWorkflows: deps.maxCachedWorkflows,
    shutdownForceTime: WORKER_SHUTDOWN_FORCE_TIME,
  });
}
