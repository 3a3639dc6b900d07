import { spawn, type ChildProcess } from 'node:child_process';
import { activityQueuePolled } from '../../src/temporal/task-queue-pollers.js';
import type { TestStack } from './local-stack.js';
import { until } from './until.js';

/**
 * `ratchet-env serve SPEC` as a child process on the test stack, resolved once Temporal has seen it poll its task
 * queue. Its "serving environment … on task queue …" line is printed as the worker starts polling, before Temporal
 * has seen a poll: a request checked in between fails UnknownEnvironment (seen once, under load). `started` is told of
 * the child before the wait, so that a test can stop it whatever happens.
 */
export async function servePythonEnvironment(
  stack: TestStack,
  python: string,
  spec: string,
  started: (child: ChildProcess) => void = () => undefined,
): Promise<ChildProcess> {
  const child = spawn(python, ['-m', 'ratchet_rollouts.environment_worker', 'serve', spec], {
    env: { ...process.env, TEMPORAL_ADDRESS: stack.temporalAddress, TEMPORAL_NAMESPACE: 'default', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started(child);
  let output = '';
  const queue = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${spec} did not start serving in 60 s: ${output}`)), 60_000);
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      const serving = /serving environment \S+ on task queue (ratchet-env-\S+)/.exec(output);
      if (serving) {
        clearTimeout(timer);
        resolve(serving[1]!);
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${spec} exited (${code}) before serving: ${output}`));
    });
  });
  await until(() => activityQueuePolled(stack.client, queue), 30_000);
  return child;
}
