import type { Client } from '@temporalio/client';
import { activityQueuePolled } from '../temporal/task-queue-pollers.js';
import { environmentTaskQueue } from '../environments/environment-set.js';

/** Names a submission uses that nothing will run: no worker here runs them, and no worker polls their task queue. */
export class UnservedEnvironments extends Error {
  override readonly name = 'UnservedEnvironments';
  constructor(
    readonly names: readonly string[],
    local: readonly string[],
  ) {
    super(
      `no environment ${names.map((n) => `"${n}"`).join(', ')}: the CPU worker here runs ${local.join(', ')}, and no worker has polled ` +
        `${names.map(environmentTaskQueue).join(', ')} (start \`ratchet-env serve\` for it, or check the name); nothing was submitted`,
    );
  }
}

/**
 * Checks, before anything is submitted, that every environment the requests name is run by the CPU worker of this
 * process (`local`: the built-ins and RATCHET_ENVIRONMENTS) or served on its own task queue (Temporal lists its
 * pollers of the last minutes). Only a client that runs the CPU worker itself can know the first: a submit-only
 * client leaves the check to the workflow, which fails such a trajectory typed `UnknownEnvironment` within seconds.
 */
export async function checkEnvironmentsServed(client: Client, requested: Iterable<string>, local: readonly string[]): Promise<void> {
  const names = [...new Set(requested)].filter((name) => !local.includes(name));
  const unserved: string[] = [];
  for (const name of names) {
    if (!(await activityQueuePolled(client, environmentTaskQueue(name)))) unserved.push(name);
  }
  if (unserved.length > 0) throw new UnservedEnvironments(unserved, local);
}
