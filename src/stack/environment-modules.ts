import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Environment } from '../environments/environment.js';

export class EnvironmentModuleError extends Error {
  override readonly name = 'EnvironmentModuleError';
}

/**
 * The user's own TypeScript/JavaScript environments (`RATCHET_ENVIRONMENTS`, comma-separated module paths): each
 * module's default export is an environment or a list of them, run in-process by the CPU worker beside the built-in
 * ones. A module that does not load, or exports no environment, stops the worker with the reason.
 */
export async function loadEnvironmentModules(modules: readonly string[]): Promise<Environment[]> {
  const loaded: Environment[] = [];
  for (const module of modules) {
    let exported: unknown;
    try {
      exported = ((await import(pathToFileURL(path.resolve(module)).href)) as { default?: unknown }).default;
    } catch (error) {
      throw new EnvironmentModuleError(`cannot load the environment module ${module}: ${(error as Error).message}`);
    }
    const environments = Array.isArray(exported) ? exported : [exported];
    if (environments.length === 0 || !environments.every(isEnvironment)) {
      throw new EnvironmentModuleError(`${module} must export by default an environment (name, reset, step) or a list of them`);
    }
    loaded.push(...environments);
  }
  return loaded;
}

function isEnvironment(value: unknown): value is Environment {
  const candidate = value as Partial<Environment> | null;
  return typeof candidate?.name === 'string' && typeof candidate.reset === 'function' && typeof candidate.step === 'function';
}
