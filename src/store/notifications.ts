import pg from 'pg';

/**
 * Calls `onNotify` on every NOTIFY on the channels. A notification only wakes its listener early: each one
 * also polls, so a dropped connection costs latency, never correctness.
 */
export async function listen(
  databaseUrl: string,
  channels: readonly string[],
  onNotify: (channel: string, payload: string | undefined) => void,
): Promise<{ close(): Promise<void> }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  client.on('error', () => undefined);
  await client.connect();
  client.on('notification', (message) => onNotify(message.channel, message.payload));
  for (const channel of channels) await client.query(`LISTEN ${channel}`);
  return { close: () => client.end().catch(() => undefined) };
}
