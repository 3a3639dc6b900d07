import type { Writable } from 'node:stream';
import { RecordBatchFileWriter, tableToIPC } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import type { ExportedTrajectory } from '../store/read/trajectory-export.js';
import { drainedOrClosed } from './output-drain.js';
import { trajectoryBatch, trajectoryTable } from './trajectory-table.js';

export { TRAJECTORY_COLUMNS, TRAJECTORY_FORMAT_VERSION, TRAJECTORY_SCHEMA, trajectoryTable } from './trajectory-table.js';

type Rows = AsyncIterable<ExportedTrajectory> | Iterable<ExportedTrajectory>;

export interface ExportOptions {
  /** Rows per Arrow record batch or Parquet row group; memory stays bounded by a chunk or two of rows. */
  rowsPerBatch?: number;
}

const ROWS_PER_BATCH = 1024;

/** An Arrow IPC file holding the rows as one record batch. */
export function arrowFileBytes(rows: readonly ExportedTrajectory[]): Uint8Array {
  return tableToIPC(trajectoryTable(rows), 'file');
}

/** Streams the rows into an Arrow IPC file (memory-mappable), one record batch per chunk. Returns the row count. */
export async function writeArrowFile(rows: Rows, out: Writable, options: ExportOptions = {}): Promise<number> {
  const writer = new RecordBatchFileWriter();
  const queued = new QueuedBytes(writer[Symbol.asyncIterator](), out);
  let count = 0;
  for await (const chunk of rowChunks(rows, options.rowsPerBatch ?? ROWS_PER_BATCH)) {
    writer.write(trajectoryBatch(chunk)); // a RecordBatch: writing a Table would also write the footer
    count += chunk.length;
    await queued.flush();
  }
  writer.close(); // writes the footer: the schema and where each record batch starts
  await queued.flush({ untilClosed: true });
  return count;
}

/** A Parquet file holding the rows as one row group, zstd-compressed. */
export function parquetBytes(rows: readonly ExportedTrajectory[]): Uint8Array {
  return parquet.writeParquet(wasmTable(rows), writerProperties());
}

/**
 * Streams the rows into a Parquet file, one row group per chunk: parquet-wasm's transformParquetStream pulls
 * record batches one at a time and emits each row group's bytes once it is full. It reads about two chunks
 * ahead of what it emits, so memory holds two or three chunks (and WebAssembly memory, which never shrinks,
 * keeps its high-water mark). Returns the row count.
 */
export async function writeParquetFile(rows: Rows, out: Writable, options: ExportOptions = {}): Promise<number> {
  const rowsPerBatch = options.rowsPerBatch ?? ROWS_PER_BATCH;
  const chunks = rowChunks(rows, rowsPerBatch);
  let count = 0;
  const batches = new ReadableStream<parquet.RecordBatch>(
    {
      async pull(controller) {
        const next = await chunks.next();
        if (next.done) return controller.close();
        count += next.value.length;
        const table = wasmTable(next.value);
        controller.enqueue(table.recordBatch(0)!);
        table.free();
      },
      async cancel() {
        await chunks.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
  const bytes = await parquet.transformParquetStream(batches, writerProperties(rowsPerBatch));
  for await (const chunk of bytes as ReadableStream<Uint8Array>) await writeBytes(out, chunk);
  return count;
}

function wasmTable(rows: readonly ExportedTrajectory[]): parquet.Table {
  return parquet.Table.fromIPCStream(tableToIPC(trajectoryTable(rows), 'stream'));
}

/** Without rowsPerGroup, parquet-wasm's default (about a million rows) keeps a batch in one row group. */
function writerProperties(rowsPerGroup?: number): parquet.WriterProperties {
  // The published parquet-wasm build includes zstd (the tests read the codec back from the file).
  const builder = new parquet.WriterPropertiesBuilder().setCompression(parquet.Compression.ZSTD);
  return (rowsPerGroup ? builder.setMaxRowGroupSize(rowsPerGroup) : builder).build();
}

/** The rows in chunks of at most `size`; always at least one chunk, so an empty export still has a schema. */
async function* rowChunks(rows: Rows, size: number): AsyncGenerator<ExportedTrajectory[]> {
  if (!Number.isInteger(size) || size < 1) throw new RangeError(`rowsPerBatch must be a positive integer, got ${size}`);
  let chunk: ExportedTrajectory[] = [];
  let emitted = false;
  for await (const row of rows) {
    chunk.push(row);
    if (chunk.length === size) {
      yield chunk;
      chunk = [];
      emitted = true;
    }
  }
  if (chunk.length > 0 || !emitted) yield chunk;
}

const NOTHING_QUEUED = Symbol('nothing queued');

/**
 * Moves the bytes an Arrow writer has queued to `out`. The writer's write() never blocks, so without this
 * the whole file would pile up in its queue when `out` is slower than the database.
 */
class QueuedBytes {
  private pending?: Promise<IteratorResult<Uint8Array>>;

  constructor(
    private readonly source: AsyncIterator<Uint8Array>,
    private readonly out: Writable,
  ) {}

  /** Writes what is queued, then returns; with untilClosed, waits for the writer to close. */
  async flush({ untilClosed = false } = {}): Promise<void> {
    for (;;) {
      this.pending ??= this.source.next();
      // Queued bytes come back as an already-resolved promise, which wins the race against NOTHING_QUEUED.
      const result = untilClosed ? await this.pending : await Promise.race([this.pending, Promise.resolve(NOTHING_QUEUED)]);
      if (result === NOTHING_QUEUED) return;
      this.pending = undefined;
      if (result.done) return;
      await writeBytes(this.out, result.value);
    }
  }
}

async function writeBytes(out: Writable, bytes: Uint8Array): Promise<void> {
  if (out.errored) throw out.errored;
  // A truncated Arrow or Parquet file is unreadable (the footer comes last), so a closed output is an error.
  if (out.destroyed || out.writableEnded) throw new Error('the output closed before the export finished');
  if (!out.write(bytes)) await drainedOrClosed(out);
}
