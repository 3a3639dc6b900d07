/** Task queue names, declared once. Overridable per deployment through the worker configuration. */
export const CPU_TASK_QUEUE = 'ratchet-cpu';
export const GPU_TASK_QUEUE = 'ratchet-gpu';
/**
 * The task queue of one inference server's GPU workers (turn affinity): a trajectory's next turn is sent here, to
 * the server that holds its prefix, and falls back to the shared GPU queue when no worker takes it in time.
 */
export function serverTaskQueue(serverName) {
    return `${GPU_TASK_QUEUE}@${serverName}`;
}
//# sourceMappingURL=task-queues.js.map