import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporalSecurity } from './security.js';
import type { RatchetConfig } from '../config.js';
import { RATCHET_SEARCH_ATTRIBUTES } from './search-attributes.js';

type TemporalSettings = RatchetConfig['temporal'];

export class TemporalUnavailable extends Error {
  override readonly name = 'TemporalUnavailable';
  constructor(address: string, cause: unknown) {
    super(`cannot reach Temporal at ${address}: ${(cause as Error)?.message ?? String(cause)}`, { cause });
  }
}

/** Connection for workers (Rust core). TLS turns on with TEMPORAL_TLS or an API key (Temporal Cloud); mTLS, CA and server name from TEMPORAL_TLS_* (temporalSecurity). */
export async function connectWorker(address: string, settings: TemporalSettings): Promise<NativeConnection> {
  try {
    return await NativeConnection.connect({ address, ...temporalSecurity(settings) });
  } catch (error) {
    throw new TemporalUnavailable(address, error);
  }
}

/** Connection for clients (submitting, querying). */
export async function connectClient(address: string, settings: TemporalSettings, connectTimeoutMs = 10_000): Promise<Connection> {
  try {
    return await Connection.connect({ address, ...temporalSecurity(settings), connectTimeout: connectTimeoutMs });
  } catch (error) {
    throw new TemporalUnavailable(address, error);
  }
}

/**
 * Registers Ratchet's search attributes where they are missing. Upserting an unregistered attribute fails
 * every workflow task, so a worker refuses to start rather than run into that.
 */
export async function ensureSearchAttributes(connection: Connection, namespace: string): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(existing.customAttributes ?? {}));
  const missing = RATCHET_SEARCH_ATTRIBUTES.filter((key) => !known.has(key.name));
  if (missing.length === 0) return;
  const types = { KEYWORD: 2, INT: 3 } as const; // temporal.api.enums.v1.IndexedValueType
  try {
    await connection.operatorService.addSearchAttributes({
      namespace,
      searchAttributes: Object.fromEntries(missing.map((key) => [key.name, types[key.type as keyof typeof types]])),
    });
  } catch (error) {
    throw new Error(
      `search attributes ${missing.map((k) => k.name).join(', ')} are not registered in namespace ${namespace} and could not be added (${(error as Error).message}); register them with \`temporal operator search-attribute create\``,
    );
  }
}
