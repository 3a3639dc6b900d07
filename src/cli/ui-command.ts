import { once } from 'node:events';
import { Client } from '@temporalio/client';
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { startStack } from '../stack/local-stack.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { startRatchetUi } from '../ui/server.js';
import { uiHost, uiPort } from '../ui/ui-port.js';
import { connectClient } from '../temporal/connection.js';

export function uiCommand(): Command {
  return new Command('ui')
    .description('serve the read-only web UI (runs, groups, trajectories, live) on 127.0.0.1:RATCHET_UI_PORT (8300) until Ctrl-C')
    .option('--temporal-ui <url>', 'Temporal UI address for links (default: the embedded one)')
    .action(async (flags: { temporalUi?: string }) => {
      const config = loadConfig();
      const stack = await startStack(config, { temporal: false });
      const pool = await openDatabase(stack.databaseUrl, { max: 4 });
      // Temporal adds the problem text, live phases and links; the UI still works from Postgres alone without it.
      const connection = await connectClient(stack.temporalAddress, config.temporal).catch((error: Error) => {
        process.stderr.write(`ratchet ui: no Temporal (${error.message}); showing what Postgres has\n`);
        return undefined;
      });
      const temporal = connection && {
        client: new Client({ connection, namespace: config.temporal.namespace }),
        namespace: config.temporal.namespace,
        uiUrl: flags.temporalUi ?? stack.temporalUiUrl,
      };
      try {
        const ui = await startRatchetUi({ pool, tokenizer: await loadModelTokenizer(config.tokenizerDir), temporal, port: uiPort(), host: uiHost() });
        process.stdout.write(`Ratchet UI  ${ui.url}\n`);
        await Promise.race([once(process, 'SIGINT'), once(process, 'SIGTERM')]);
        await ui.close();
      } finally {
        await connection?.close();
        await pool.end();
        await stack.stop();
      }
    });
}
