import type { CodeSandboxPool } from '../code/index.js';
import type { VerifierPool } from '../verifier/index.js';
import { codeEnvironment } from './code-environment.js';
import { EnvironmentFailure, type Environment } from './environment.js';
import { FailureType } from '../trajectory/failure.js';
import { mathEnvironment } from './math-environment.js';
import { mathPythonToolEnvironment } from './math-python-tool.js';

/** The environments every CPU worker runs in-process. */
export const BUILT_IN_ENVIRONMENTS = ['math', 'code', 'math-python-tool'] as const;

/** A request names its environment; without a name, a code task is `code` and anything else `math`, as before environments. */
export function environmentNameOf(request: { environment?: string | undefined; code?: unknown }): string {
  return request.environment ?? (request.code ? 'code' : 'math');
}

/** An environment no CPU worker runs is served by its own worker (Python's `ratchet-env serve`) on this task queue. */
export function environmentTaskQueue(name: string): string {
  return `ratchet-env-${name}`;
}

/** The episode's seed: FNV-1a of the trajectory id, so every run of a step sees the same one. */
export function environmentSeed(trajectoryId: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(trajectoryId)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

/** The environments a CPU worker runs in-process, by name: the built-in ones and the user's own. */
export class EnvironmentSet {
  private readonly byName = new Map<string, Environment>();

  constructor(environments: readonly Environment[]) {
    for (const environment of environments) {
      if (this.byName.has(environment.name)) throw new Error(`two environments are named "${environment.name}"`);
      this.byName.set(environment.name, environment);
    }
  }

  get(name: string): Environment | undefined {
    return this.byName.get(name);
  }

  names(): string[] {
    return [...this.byName.keys()];
  }
}

/** The built-in environments on this worker's verifier and sandbox pools, then the user's (a user's may not reuse a built-in name). */
export function workerEnvironments(deps: { verifier: VerifierPool; sandbox: CodeSandboxPool }, own: readonly Environment[] = []): EnvironmentSet {
  return new EnvironmentSet([mathEnvironment(deps.verifier), codeEnvironment(deps.sandbox), mathPythonToolEnvironment(deps), ...own]);
}

/** A request names an environment this worker does not run and no environment worker serves: typed, data (a typo, most often). */
export function unknownEnvironment(name: string, environments: EnvironmentSet): EnvironmentFailure {
  return new EnvironmentFailure(
    `no environment "${name}": the CPU worker runs ${environments.names().join(', ')}, and no worker has polled the task queue ${environmentTaskQueue(name)}`,
    'data',
    { failureType: FailureType.UnknownEnvironment },
  );
}
