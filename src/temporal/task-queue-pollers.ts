import type { Client } from '@temporalio/client';
// The proto package is CommonJS: under plain Node its named exports are not found (vitest alone would hide that).
import proto from '@temporalio/proto';

const { TaskQueueType } = proto.temporal.api.enums.v1;

/**
 * Whether any worker polls (or polled in the last minutes: Temporal keeps recent pollers, so a restarting worker
 * still counts) the activity task queue `taskQueue`. How Ratchet tells an environment served on its own worker from
 * a name nothing serves.
 */
export function activityQueuePolled(client: Client, taskQueue: string, namespace = client.options.namespace): Promise<boolean> {
  return queuePolled(client, taskQueue, namespace, TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY);
}

/** The same for a workflow task queue: how Ratchet tells an agent workflow's queue from one no worker serves. */
export function workflowQueuePolled(client: Client, taskQueue: string, namespace = client.options.namespace): Promise<boolean> {
  return queuePolled(client, taskQueue, namespace, TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW);
}

async function queuePolled(
  client: Client,
  taskQueue: string,
  namespace: string,
  taskQueueType: proto.temporal.api.enums.v1.TaskQueueType,
): Promise<boolean> {
  const { pollers } = await client.workflowService.describeTaskQueue({ namespace, taskQueue: { name: taskQueue }, taskQueueType });
  return (pollers?.length ?? 0) > 0;
}
