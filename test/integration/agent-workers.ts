import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { waitForLine } from '../../scripts/support/ratchet-process.js';
import type { TestStack } from './local-stack.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

/** The example agent workflow's worker, a process of its own as a user runs it (vite-node), with its log kept. */
export interface AgentWorkflowWorker {
  child: ChildProcess;
  log(): string;
}

/** Starts examples/agents/workflow-agent/worker.ts on `taskQueue`; resolves once it polls. */
export async function startAgentWorkflowWorker(stack: TestStack, taskQueue: string): Promise<AgentWorkflowWorker> {
  const child = spawn(process.execPath, [path.join(ROOT, 'node_modules/vite-node/vite-node.mjs'), 'examples/agents/workflow-agent/worker.ts'], {
    cwd: ROOT,
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, AGENT_TASK_QUEUE: taskQueue },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  // Kept for a failure's report, and read, so that a full pipe never blocks the worker.
  child.stderr!.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8000)));
  await waitForLine(child, /polling/, 60_000);
  child.stdout!.resume();
  return { child, log: () => log };
}

/** The environment of a `ratchet worker cpu` process on the test stack, running the agent programs in `programsFile`. */
export function cpuWorkerEnv(stack: TestStack, programsFile: string): NodeJS.ProcessEnv {
  return {
    TEMPORAL_ADDRESS: stack.temporalAddress,
    DATABASE_URL: stack.databaseUrl,
    LOG_LEVEL: 'warn',
    RATCHET_VERIFIER_THREADS: '1',
    RATCHET_AGENT_PROGRAMS: programsFile,
  };
}
