import type { Connection } from '@temporalio/client';

/** The two calls the readiness check makes, so a test can stand in for a server that is still starting. */
export type NamespaceProbe = Pick<Connection['workflowService'], 'describeNamespace' | 'listWorkflowExecutions'>;

/**
 * Whether `namespace` serves on this connection: its record exists (describeNamespace reads persistence) and the
 * frontend resolves it for a workflow call (listWorkflowExecutions goes through the namespace registry, as a start
 * or a search-attribute lookup does). A server accepts connections, and answers its health check, before either
 * holds: the dev server creates `default` moments after it listens, and a registered namespace reaches the
 * frontend's registry after its record. Throws while the namespace does not serve (pollUntil counts that as not yet).
 */
export async function namespaceServes(service: NamespaceProbe, namespace: string): Promise<true> {
  await service.describeNamespace({ namespace });
  await service.listWorkflowExecutions({ namespace, pageSize: 1 });
  return true;
}
