import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { Command, Option } from 'commander';
import { drainedOrClosed } from '../export/output-drain.js';
import { withDatabase } from './with-database.js';
import { writeArrowFile, writeParquetFile } from '../export/arrow-trajectories.js';
import { readMonitorRecords, readTrajectories, type ExportedTrajectory } from '../store/trajectory-export.js';

const format = () => new Option('--format <format>', 'output format').choices(['jsonl']).default('jsonl');

/** Column files for Python trainers; see docs/trainer-export.md. */
const binaryWriters = { arrow: writeArrowFile, parquet: writeParquetFile };
type BinaryFormat = keyof typeof binaryWriters;

export function exportCommand(): Command {
  return new Command('export')
    .description('write stored trajectories, oldest birth_time first: JSON lines, or an Arrow IPC / Parquet file (docs/trainer-export.md)')
    .addOption(new Option('--format <format>', 'output format').choices(['jsonl', 'arrow', 'parquet']).default('jsonl'))
    .option('--out <file>', 'write to FILE instead of stdout (required for arrow and parquet; "-" writes them to stdout)')
    .option('--include-failed', 'also write failed trajectories (status "failed", with error, failure_type and failure_class)', false)
    .action(async (flags) => {
      // Checked before the database starts: a binary file is never written to a terminal by accident.
      if (flags.format !== 'jsonl' && !flags.out) throw new Error(`--format ${flags.format} needs --out <file> (or --out - for stdout)`);
      const count = await withDatabase((pool) => {
        const rows = readTrajectories(pool, { includeFailed: flags.includeFailed });
        return flags.format === 'jsonl' ? writeLines(rows, flags.out) : writeColumns(flags.format, rows, flags.out);
      });
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
    if (!out.write(`${JSON.stringify(row)}\n`)) await drainedOrClosed(out).catch(() => undefined);
    count += 1;
  }
  if (file) await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return count;
}

async function writeColumns(format: BinaryFormat, rows: AsyncIterable<ExportedTrajectory>, file: string): Promise<number> {
  if (file === '-') return binaryWriters[format](rows, process.stdout);
  const out = createWriteStream(file);
  // A file that cannot be opened or written fails the export (once() keeps the error from going unhandled).
  const failed = once(out, 'error').then(([error]) => Promise.reject(error as Error));
  const count = await Promise.race([binaryWriters[format](rows, out), failed]);
  await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  return count;
}
