import type { Writable } from 'node:stream';
import { Command, Option } from 'commander';
import { drainedOrClosed } from '../export/output-drain.js';
import { writeArrowFile, writeParquetFile } from '../export/arrow-trajectories.js';
import { readMonitorRecords, readTrajectories, type ExportedTrajectory } from '../store/read/trajectory-export.js';
import { OutputFile } from './output-file.js';
import { UsageError } from './usage-error.js';
import { withDatabase } from './with-database.js';

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
      if (flags.format !== 'jsonl' && !flags.out) throw new UsageError(`--format ${flags.format} needs --out <file> (or --out - for stdout)`);
      const count = await writeTo(flags.out, (out) =>
        withDatabase((pool) => {
          const rows = readTrajectories(pool, { includeFailed: flags.includeFailed });
          return flags.format === 'jsonl' ? writeLines(rows, out) : binaryWriters[flags.format as BinaryFormat](rows, out.stream);
        }),
      );
      process.stderr.write(`exported ${count} trajectories\n`);
    });
}

export function monitorCommand(): Command {
  return new Command('monitor')
    .description('write the per-turn monitor records (version_start, version_end, success, prompt_len, answer_len)')
    .addOption(format())
    .option('--out <file>', 'write to FILE instead of stdout')
    .action(async (flags) => {
      const count = await writeTo(flags.out, (out) => withDatabase((pool) => writeLines(readMonitorRecords(pool), out)));
      process.stderr.write(`exported ${count} monitor records\n`);
    });
}

/** Where rows go: stdout, or a file that may fail (and then must fail the export, not crash it). */
interface Output {
  stream: Writable;
  /** Throws the file's write error, if any; stdout's own errors (EPIPE) end the export quietly. */
  check(): void;
}

const STDOUT: Output = { stream: process.stdout, check: () => undefined };

/**
 * Runs `work` against `file` (or stdout for none or "-"). The file is opened before the work starts Postgres, so an
 * unwritable path fails at once; a write that fails later rejects, so `withDatabase` still stops what it started,
 * and the partial file is removed.
 */
async function writeTo(file: string | undefined, work: (out: Output) => Promise<number>): Promise<number> {
  if (!file || file === '-') return work(STDOUT);
  const output = await OutputFile.open(file);
  try {
    // No race against the stream's 'error': the writers see a failed stream at their next write and reject,
    // so the work returns only after withDatabase has stopped the Postgres it started.
    const count = await work(output);
    await output.finish();
    return count;
  } catch (error) {
    await output.abandon();
    throw error;
  }
}

async function writeLines(rows: AsyncIterable<object>, out: Output): Promise<number> {
  let count = 0;
  for await (const row of rows) {
    out.check();
    if (out.stream.destroyed) break; // the reader went away (EPIPE)
    if (!out.stream.write(`${JSON.stringify(row)}\n`)) await drainedOrClosed(out.stream).catch(() => undefined);
    count += 1;
  }
  out.check();
  return count;
}
