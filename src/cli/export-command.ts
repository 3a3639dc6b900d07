import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { Command, Option } from 'commander';
import { withDatabase } from './with-database.js';
import { readMonitorRecords, readTrajectories } from '../store/trajectory-export.js';

const format = () => new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl');

export function exportCommand(): Command {
  return new Command('export')
    .description('write stored trajectories, one JSON object per line, oldest birth_time first')
    .addOption(format())
    .option('--out <file>', 'write to FILE instead of stdout')
    .option('--include-failed', 'also write failed trajectories (status "failed", with their error)', false)
    .action(async (flags) => {
      const count = await withDatabase((pool) => writeLines(readTrajectories(pool, { includeFailed: flags.includeFailed }), flags.out));
      process.stderr.write(`exported ${count} trajectories\n`);
    });
}

export function monitorCommand(): Command {
  return new Command('monitor')
    .description('write the per-turn monitor records (version_start, version_end, success, prompt_len, answer_len)')
    .addOption(format())
    .option('--out <file>', 'write to FILE instead of stdout')
    .action(async (flags) => {
      const count = await withDatabase((pool) => writeLines(readMonitorRecords(pool), flags.out));
      process.stderr.write(`exported ${count} monitor records\n`);
    });
}

async function writeLines(rows: AsyncIterable<object>, file?: string): Promise<number> {
  const out: Writable = file ? createWriteStream(file) : process.stdout;
  let count = 0;
  for await (const row of rows) {
    if (out.destroyed) break; // the reader went away (EPIPE)
    if (!out.write(`${JSON.stringify(row)}\n`)) await Promise.race([once(out, 'drain'), once(out, 'close')]).catch(() => undefined);
    count += 1;
  }
  if (file) await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return count;
}
