/** Task queue names, declared once. Overridable per deployment through the worker configuration. */
export const CPU_TASK_QUEUE = 'ratchet-cpu';
export const GPU_TASK_QUEUE = 'ratchet-gpu';