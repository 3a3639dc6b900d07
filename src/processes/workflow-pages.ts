import type { Client, WorkflowExecutionInfo } from '@temporalio/client';

/** Visibility lags a close by a moment: a sweep looks this far back past the last one's start. */
export const VISIBILITY_LAG_MS = 60_000;

/** Trajectory workflows matching a visibility query, in pages of `size`: each page is then read with one SQL query. */
export async function* workflowPages(temporal: Client, query: string, size = 100): AsyncGenerator<WorkflowExecutionInfo[]> {
  let page: WorkflowExecutionInfo[] = [];
  for await (const execution of temporal.workflow.list({ query })) {
    page.push(execution);
    if (page.length === size) {
      yield page;
      page = [];
    }
  }
  if (page.length > 0) yield page;
}
