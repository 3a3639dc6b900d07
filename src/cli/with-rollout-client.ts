import { RolloutClient } from '../client/rollout-client.js';
import { loadConfig } from '../config.js';
import { startStack } from '../stack/local-stack.js';

/** Runs `work` with a RolloutClient on the configured stack, or the embedded one (started if it is not running). */
export async function withRolloutClient<T>(work: (client: RolloutClient, databaseUrl: string) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const stack = await startStack(config, { headless: true });
  try {
    const client = await RolloutClient.connect({ temporalAddress: stack.temporalAddress, databaseUrl: stack.databaseUrl });
    try {
      return await work(client, stack.databaseUrl);
    } finally {
      await client.close();
    }
  } finally {
    await stack.stop();
  }
}
