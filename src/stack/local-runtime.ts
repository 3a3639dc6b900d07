import type { Client } from '@temporalio/client';
import type pg from 'pg';
import { CodeSandboxPool } from '../code/index.js';
import type { RatchetConfig } from '../config.js';
import type { Problem } from '../datasets/index.js';
import { createBackend } from '../policy/backend-config.js';
import { NO_FAULTS } from '../policy/simulated/faults.js';
import { DEFAULT_SIMULATED_POLICY, type SimulatedPolicyConfig } from '../policy/simulated/policy-config.js';
import { AnswerBook, startSimulatedPolicy } from '../policy/simulated/server.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { VerifierPool } from '../verifier/index.js';
import { startAdmission } from './admission.js';
import { startStack, type EmbeddedTemporal, type Stack } from './local-stack.js';
import { connectStack } from './stack-connections.js';
import { Teardown } from './teardown.js';
import { loadAgentProgramFile } from './agent-program-file.js';
import { loadEnvironmentModules } from './environment-modules.js';
import { BUILT_IN_ENVIRONMENTS } from '../environments/environment-set.js';
import { startWorkers } from './workers.js';

export interface LocalRuntime {
  stack: Stack;
  client: Client;
  pool: pg.Pool;
  /** The inference server generation goes to: RATCHET_POLICY_URL, or the simulated policy started here. */
  policyUrl: string;
  simulated: boolean;
  /** The environments the CPU worker of this process runs (absent: its workers run elsewhere). */
  environments?: readonly string[];
  /** Takes the runtime down; a caller adds what it starts on top (the UI, metrics) so one stop ends all. */
  teardown: Teardown;
  stop(): Promise<void>;
}

export interface LocalRuntimeOptions {
  /** Problems the simulated policy can answer (it looks their gold answers up). */
  problems: readonly Problem[];
  /** Run a CPU worker, a GPU worker and the admission controller in this process (false: they run elsewhere). */
  workers: boolean;
  headless?: boolean;
  /** Which Temporal to start when TEMPORAL_ADDRESS is unset: the dev server (default) or the server users deploy. */
  temporalServer?: EmbeddedTemporal;
  simulatedPolicy?: Partial<SimulatedPolicyConfig>;
}

/**
 * Everything one process needs to run rollouts on one machine: the stack (embedded or configured), a client,
 * and, when asked, both workers, the admission controller and the simulated policy. `stop()` undoes it in
 * reverse order; a start that fails undoes what it had started.
 */
export async function startLocalRuntime(config: RatchetConfig, options: LocalRuntimeOptions): Promise<LocalRuntime> {
  const teardown = new Teardown();
  return teardown.guard(async () => {
    const stack = await startStack(config, {
      headless: options.headless,
      temporalServer: options.temporalServer,
      log: (line) => process.stderr.write(`${line}\n`),
    });
    teardown.add('stack', stack.stop);
    const { pool, client } = await connectStack(stack, config.temporal, teardown);
    const tokenizer = await loadModelTokenizer(config.tokenizerDir);
    let policyUrl = config.policyUrl;
    if (!policyUrl) {
      const policy = await startSimulatedPolicy(tokenizer, new AnswerBook(options.problems), {
        ...DEFAULT_SIMULATED_POLICY,
        faults: NO_FAULTS,
        ...options.simulatedPolicy,
      });
      teardown.add('simulated policy', policy.close);
      policyUrl = policy.url;
    }
    let environments: string[] | undefined;
    if (options.workers) {
      const own = await loadEnvironmentModules(config.environmentModules);
      const agentPrograms = await loadAgentProgramFile(config.agentProgramFile, [
        ...BUILT_IN_ENVIRONMENTS,
        ...own.map((environment) => environment.name),
      ]);
      environments = [...BUILT_IN_ENVIRONMENTS, ...own.map((environment) => environment.name), ...agentPrograms.map((program) => program.name)];
      const verifier = new VerifierPool(config.verifier);
      teardown.add('verifier pool', () => verifier.close());
      const workers = await startWorkers({
        temporal: { address: stack.temporalAddress, settings: config.temporal },
        pool,
        databaseUrl: stack.databaseUrl,
        cpu: {
          tokenizer,
          verifier,
          sandbox: new CodeSandboxPool(),
          maxCachedWorkflows: config.workflowCache,
          uiUrl: config.uiUrl,
          environments: own,
          agentPrograms,
          agentEndpoint: config.agentEndpoint,
        },
        gpu: {
          backend: createBackend(config.policyUrl ? config.policyBackend : 'sglang', policyUrl, config.policyUrl ? config.policyApiKey : undefined),
          slots: config.gpuSlots,
          heartbeatIntervalMs: config.heartbeatIntervalMs,
        },
      });
      teardown.add('workers', workers.stop);
      await startAdmission({ pool, client, databaseUrl: stack.databaseUrl }, teardown);
    }
    return {
      stack,
      client,
      pool,
      policyUrl,
      simulated: !config.policyUrl,
      ...(environments ? { environments } : {}),
      teardown,
      stop: () => teardown.run(),
    };
  });
}
