import os from 'node:os';
import { Command, InvalidArgumentError, Option } from 'commander';
import type pg from 'pg';
import { acknowledgeBatch, extendLease, releaseBatch } from '../store/write/batches.js';
import { consumeBatch, type Batch } from '../consumption/consume.js';
import { arrowFileBytes, parquetBytes } from '../export/arrow-trajectories.js';
import { OutputFile } from './output-file.js';
import { positiveInt } from './shared-options.js';
import { UsageError } from './usage-error.js';
import { withDatabase } from './with-database.js';

/** Exit status when no batch was ready in time: a trainer's loop can tell it from a failure. */
export const NO_BATCH_EXIT = 3;

const seconds = (value: string): number => {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new InvalidArgumentError(`expected seconds (a non-negative number), got "${value}"`);
  return n;
};

export function consumeCommand(): Command {
  return new Command('consume')
    .description('claim the oldest finished groups of a run as one batch and write it; acknowledge it with `ratchet ack`')
    .requiredOption('--run <id>', 'the training run')
    .requiredOption('--batch-size <groups>', 'groups in the batch', positiveInt)
    .addOption(
      new Option('--format <format>', 'jsonl, or Arrow IPC file / Parquet with packed int32/float32 columns')
        .choices(['jsonl', 'arrow', 'parquet'])
        .default('jsonl'),
    )
    .option('--out <file>', 'write the batch to FILE (required for arrow and parquet; - for stdout); the summary goes to stdout, or to stderr with -')
    .option('--lease <seconds>', 'unacknowledged after this long, the groups go to another consumer', seconds, 600)
    .option('--wait <seconds>', 'how long to wait for enough finished groups', seconds, 600)
    .option('--partial', 'when the wait runs out, hand out the finished groups there are (at least one)', false)
    .option('--consumer <name>', 'who is consuming, for operators', `${os.hostname()}:${process.pid}`)
    .action(async (flags) => {
      if (flags.format !== 'jsonl' && !flags.out) throw new UsageError(`--format ${flags.format} needs --out <file> (or --out - for stdout)`);
      const toStdout = !flags.out || flags.out === '-';
      // Opened before claiming: a path that cannot be written fails here, with no groups leased to nobody.
      const output = toStdout ? undefined : await OutputFile.open(flags.out);
      let batch: Batch | undefined;
      try {
        batch = await withDatabase(async (pool, databaseUrl) => {
          const claimed = await consumeBatch(pool, databaseUrl, {
            runId: flags.run,
            batchSize: flags.batchSize,
            consumer: flags.consumer,
            leaseMs: flags.lease * 1000,
            waitMs: flags.wait * 1000,
            partial: flags.partial,
          });
          if (claimed && output) await writeOrRelease(pool, claimed, output, flags.format);
          return claimed;
        });
      } catch (error) {
        await output?.abandon();
        throw error;
      }
      if (!batch) {
        await output?.abandon();
        process.stderr.write(`ratchet: no batch: fewer than ${flags.batchSize} finished groups in run ${flags.run} within ${flags.wait}s\n`);
        process.exitCode = NO_BATCH_EXIT;
        return;
      }
      const summary = JSON.stringify(describe(batch, toStdout ? null : flags.out));
      if (toStdout) {
        process.stdout.write(encode(batch, flags.format));
        process.stderr.write(`${summary}\n`);
      } else {
        process.stdout.write(`${summary}\n`);
      }
    });
}

/** Writes the batch; if that fails, its groups go straight back to the next consumer instead of waiting out the lease. */
async function writeOrRelease(pool: pg.Pool, batch: Batch, output: OutputFile, format: BatchFormat): Promise<void> {
  try {
    output.stream.write(encode(batch, format));
    await output.finish();
  } catch (error) {
    await releaseBatch(pool, batch.batchId);
    throw new Error(`${(error as Error).message}; batch ${batch.batchId} was released, its ${batch.groupIds.length} groups go to the next consumer`, {
      cause: error,
    });
  }
}

export function ackCommand(): Command {
  return new Command('ack')
    .description('acknowledge a consumed batch: its groups are never handed out again')
    .argument('<batch-id>', 'the batchId printed by `ratchet consume`')
    .option('--extend <seconds>', "instead of acknowledging, extend the batch's lease by this long", seconds)
    .action(async (batchId: string, flags: { extend?: number }) => {
      await withDatabase(async (pool) => {
        if (flags.extend !== undefined) {
          const until = await extendLease(pool, batchId, flags.extend * 1000);
          process.stdout.write(`${JSON.stringify({ batchId, leaseExpiresAt: until.toISOString() })}\n`);
          return;
        }
        const { alreadyAcknowledged } = await acknowledgeBatch(pool, batchId);
        process.stdout.write(`${JSON.stringify({ batchId, acknowledged: true, alreadyAcknowledged })}\n`);
      });
    });
}

function describe(batch: Batch, out: string | null) {
  return {
    batchId: batch.batchId,
    runId: batch.runId,
    consumer: batch.consumer,
    policyVersion: batch.policyVersion,
    leaseExpiresAt: batch.leaseExpiresAt.toISOString(),
    groups: batch.groupIds.length,
    trajectories: batch.rows.length,
    staleTrajectories: batch.staleTrajectories,
    groupIds: batch.groupIds,
    out,
  };
}

type BatchFormat = 'jsonl' | 'arrow' | 'parquet';

function encode(batch: Batch, format: BatchFormat): Uint8Array | string {
  if (format === 'arrow') return arrowFileBytes(batch.rows);
  if (format === 'parquet') return parquetBytes(batch.rows);
  return batch.rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}
