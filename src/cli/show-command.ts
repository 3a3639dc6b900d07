import { Client } from '@temporalio/client';
import { Command } from 'commander';
import { loadConfig } from '../config.js';
import { startStack } from '../stack/local-stack.js';
import { openDatabase } from '../store/database.js';
import { loadModelTokenizer } from '../tokens/model-tokenizer.js';
import { conversationText } from '../ui/conversation-text.js';
import { loadTrajectoryDetails } from '../ui/trajectory-details.js';
import { connectClient } from '../temporal/connection.js';

export function showCommand(): Command {
  return new Command('show')
    .description('print one trajectory turn by turn: decoded answers, extracted answers, verdicts, feedback, rewards (--json: the whole view)')
    .argument('<trajectory-id>')
    .option('--json', 'print the view as JSON (token ids, logprobs and versions included)')
    .action(async (trajectoryId: string, flags: { json?: boolean }) => {
      const config = loadConfig();
      const stack = await startStack(config, { temporal: false });
      try {
        const pool = await openDatabase(stack.databaseUrl, { max: 2 });
        // Temporal adds the problem text and the live phase; without it the view is what Postgres has.
        const connection = await connectClient(stack.temporalAddress, config.temporal).catch(() => undefined);
        try {
          const temporal = connection && {
            client: new Client({ connection, namespace: config.temporal.namespace }),
            namespace: config.temporal.namespace,
            uiUrl: stack.temporalUiUrl,
          };
          const details = await loadTrajectoryDetails(pool, await loadModelTokenizer(config.tokenizerDir), temporal, trajectoryId);
          if (details.view.status === 'unknown' && !details.problem) throw new Error(`no trajectory ${trajectoryId} in Postgres or Temporal`);
          process.stdout.write(flags.json ? `${JSON.stringify(details)}\n` : conversationText(details));
        } finally {
          await connection?.close();
          await pool.end();
        }
      } finally {
        await stack.stop();
      }
    });
}
