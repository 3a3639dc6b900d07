import path from 'node:path';
import { Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../src/stack/free-port.js';
import { namespaceServes, type NamespaceProbe } from '../../src/stack/namespace-ready.js';
import { startTemporalDevServer } from '../../src/stack/temporal-dev-server.js';
import { pollUntil } from '../../src/timing/poll-until.js';

const NOT_FOUND = Object.assign(new Error("Namespace not found: 'default'"), { code: 5 });

/** A frontend that has the namespace's record after `recordAfter` calls and resolves it after `registryAfter`. */
function startingServer(recordAfter: number, registryAfter: number): NamespaceProbe & { calls: string[] } {
  const calls: string[] = [];
  let describes = 0;
  let lists = 0;
  return {
    calls,
    describeNamespace: (async () => {
      calls.push('describe');
      if (describes++ < recordAfter) throw NOT_FOUND;
      return {};
    }) as unknown as NamespaceProbe['describeNamespace'],
    listWorkflowExecutions: (async () => {
      calls.push('list');
      if (lists++ < registryAfter) throw NOT_FOUND;
      return {};
    }) as unknown as NamespaceProbe['listWorkflowExecutions'],
  };
}

describe('waiting for a namespace', () => {
  it('does not count a server as serving until both its record and its registry have the namespace', async () => {
    const server = startingServer(2, 1);
    await pollUntil(() => namespaceServes(server, 'default'), { what: 'the namespace', timeoutMs: 5_000, intervalMs: 1 });
    // Two describes fail (no record yet), the third passes and the first list fails (registry behind), then both pass.
    expect(server.calls).toEqual(['describe', 'describe', 'describe', 'list', 'describe', 'list']);
  });

  it('rethrows what the server says while it does not serve the namespace', async () => {
    await expect(namespaceServes(startingServer(1, 0), 'default')).rejects.toThrow(/Namespace not found/);
    await expect(namespaceServes(startingServer(0, 1), 'default')).rejects.toThrow(/Namespace not found/);
  });

  it('a started dev server serves its namespace the moment its start returns', async () => {
    const server = await startTemporalDevServer({ stateDir: path.resolve('.ratchet'), port: await freePort(), headless: true });
    try {
      const connection = await Connection.connect({ address: server.address });
      try {
        // No retry here: each of these is a first call a caller makes at once (ensureSearchAttributes, a start).
        const described = await connection.workflowService.describeNamespace({ namespace: 'default' });
        expect(described.namespaceInfo?.name).toBe('default');
        const attributes = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
        expect(Object.keys(attributes.customAttributes ?? {})).toContain('RatchetQid');
      } finally {
        await connection.close();
      }
    } finally {
      await server.stop();
    }
  });
});
