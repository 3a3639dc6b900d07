import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, DefaultLogger, type WorkflowBundleWithSourceMap } from '@temporalio/worker';

/** The workflow entry point: compiled JS under dist/, or the TypeScript source when run from src/ (tests). */
export function workflowsPath(): string {
  const compiled = fileURLToPath(new URL('../workflows/index.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../workflows/index.ts', import.meta.url));
}

let bundle: Promise<WorkflowBundleWithSourceMap> | undefined;

/** Bundles the workflows once per process; every worker in the process shares the bundle. */
export function workflowBundle(): Promise<WorkflowBundleWithSourceMap> {
  bundle ??= bundleWorkflowCode({ workflowsPath: workflowsPath(), logger: new DefaultLogger('WARN') });
  return bundle;
}
