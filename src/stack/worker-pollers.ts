import type { Client } from '@temporalio/client';
// The proto package is CommonJS: under plain Node its named exports are not found (vitest alone would hide that).
import proto from '@temporalio/proto';
import { CPU_TASK_QUEUE, GPU_TASK_QUEUE } from '../task-queues.js';
import { pollUntil } from '../timing/poll-until.js';

const { temporal } = proto;

export interface UntilPollingOptions {
  timeoutMs: number;
  intervalMs?: number;
  namespace?: string;
  /** Throws to end the wait at once (the worker's process exited). */
  abortIf?: () => void;
}

/**
 * Resolves once Temporal lists the worker process `pid` as a poller of its kind's queue: the CPU worker's workflow
 * queue, the GPU worker's activity queue. The SDK's default identity is `pid@host`.
 */
export async function untilPolling(client: Client, pid: number, kind: 'cpu' | 'gpu', options: UntilPollingOptions): Promise<void> {
  const { TaskQueueType } = temporal.api.enums.v1;
  await pollUntil(
    async () => {
      const queue = await client.workflowService.describeTaskQueue({
        namespace: options.namespace ?? 'default',
        taskQueue: { name: kind === 'cpu' ? CPU_TASK_QUEUE : GPU_TASK_QUEUE },
        taskQueueType: kind === 'cpu' ? TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW : TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
      });
      return (queue.pollers ?? []).map((poller) => poller.identity ?? '');
    },
    {
      what: `${kind} worker pid ${pid} polling`,
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs,
      abortIf: options.abortIf,
      fatal: () => true,
      done: (identities) => identities.some((identity) => identity.startsWith(`${pid}@`)),
    },
  );
}
