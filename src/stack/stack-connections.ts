import { Client, type Connection } from '@temporalio/client';
import type pg from 'pg';
import type { RatchetConfig } from '../config.js';
import { openDatabase } from '../store/database.js';
import { connectClient, ensureSearchAttributes } from '../temporal/connection.js';
import type { Teardown } from './teardown.js';

/** A client's way into a running stack: Ratchet's database and Temporal, search attributes registered. */
export interface StackConnections {
  pool: pg.Pool;
  connection: Connection;
  client: Client;
}

/** Temporal settings for a server this process started on loopback: no TLS, no API key, the default namespace. */
export function loopbackTemporal(address: string): RatchetConfig['temporal'] {
  return { address, namespace: 'default', apiKey: undefined, tls: false };
}

/** Opens the pool and the Temporal client, each closed by `teardown`. */
export async function connectStack(
  at: { databaseUrl: string; temporalAddress: string },
  settings: RatchetConfig['temporal'],
  teardown: Teardown,
  poolOptions: { max?: number } = {},
): Promise<StackConnections> {
  const pool = await openDatabase(at.databaseUrl, poolOptions);
  teardown.add('database pool', () => pool.end());
  const connection = await connectClient(at.temporalAddress, settings);
  teardown.add('Temporal client', () => connection.close());
  await ensureSearchAttributes(connection, settings.namespace);
  return { pool, connection, client: new Client({ connection, namespace: settings.namespace }) };
}
