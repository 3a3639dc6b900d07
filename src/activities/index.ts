import type pg from 'pg';
import type { CodeSandboxPool } from '../code/index.js';
import type { Environment } from '../environments/environment.js';
import { workerEnvironments } from '../environments/environment-set.js';
import type { InferenceBackend } from '../policy/inference-backend.js';
import type { ServedLogprobs } from '../policy/logprob-verdict.js';
import type { ServedVersion } from '../policy/resumable-generation.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { VerifierPool } from '../verifier/index.js';
import type { AgentProgram, AgentProgramHost } from '../agent/program-host.js';
import { agentCallActivities } from './agent-calls.js';
import { runAgentProgramActivity } from './agent-program.js';
import { checkAgentResult, openAgentEndpointActivity } from './agent-workflow-run.js';
import { answerTextActivity } from './answer-text.js';
import { checkRequestActivity } from './check-request.js';
import { environmentStepActivity } from './environment-step.js';
import { generateActivity } from './generate.js';
import { joinGroupActivity } from './join-group.js';
import { persistFailureActivity, persistTrajectoryActivity } from './persist.js';
import { releaseTwoActivities } from './releases/index.js';
import { tokenizePromptActivity } from './tokenize-prompt.js';

/**
 * Activities of the CPU worker: everything but generation. Since release 3 the workflow runs them as local
 * activities; `verify` and `appendFeedback` (src/activities/releases/) stay for trajectories that started under
 * release 2, until the drop list (src/workflows/releases/drop-list.ts) says they can go.
 */
export function createCpuActivities(deps: {
  pool: pg.Pool;
  tokenizer: ModelTokenizer;
  verifier: VerifierPool;
  sandbox: CodeSandboxPool;
  uiUrl?: string;
  /** The user's own environments, beside the built-in ones. */
  environments?: readonly Environment[];
  /** Where the worker's agent programs reach their endpoint (absent: the worker runs none). */
  agentHost?: AgentProgramHost;
  /** The agent programs it runs, by name. */
  agentPrograms?: ReadonlyMap<string, AgentProgram>;
}) {
  const environments = workerEnvironments(deps, deps.environments);
  return {
    checkRequest: checkRequestActivity(deps.uiUrl, environments, deps.agentPrograms),
    joinGroupForAdmission: joinGroupActivity(deps.pool),
    tokenizePrompt: tokenizePromptActivity(deps.pool, deps.tokenizer, environments),
    environmentStep: environmentStepActivity(deps.pool, deps.tokenizer, environments),
    answerText: answerTextActivity(deps.pool, deps.tokenizer),
    ...agentCallActivities(deps.pool, deps.tokenizer, deps.verifier),
    runAgentProgram: runAgentProgramActivity(deps.agentHost),
    openAgentEndpoint: openAgentEndpointActivity(deps.agentHost),
    checkAgentResult,
    ...releaseTwoActivities(deps),
    persistTrajectory: persistTrajectoryActivity(deps.pool),
    persistFailure: persistFailureActivity(deps.pool),
  };
}

/** Activities of the GPU worker: generation only, on its own task queue. */
export function createGpuActivities(deps: {
  pool: pg.Pool;
  backend: InferenceBackend;
  currentVersion: ServedVersion;
  heartbeatIntervalMs: number;
  servedLogprobs?: () => Promise<ServedLogprobs>;
  /** The worker's own task queue, reported with each turn so the trajectory's next turn asks for it. */
  affinityQueue?: string;
}) {
  return {
    generate: generateActivity(deps.pool, deps.backend, deps.currentVersion, deps.heartbeatIntervalMs, deps.servedLogprobs, deps.affinityQueue),
  };
}

export type CpuActivities = ReturnType<typeof createCpuActivities>;
export type GpuActivities = ReturnType<typeof createGpuActivities>;
