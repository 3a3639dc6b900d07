import { readFileSync } from 'node:fs';
import { Writable } from 'node:stream';
import { RecordBatchReader, tableFromIPC, type Table } from 'apache-arrow';
import * as parquet from 'parquet-wasm';
import { describe, expect, it } from 'vitest';
import {
  arrowFileBytes,
  parquetBytes,
  TRAJECTORY_COLUMNS,
  trajectoryTable,
  writeArrowFile,
  writeParquetFile,
} from '../../src/export/arrow-trajectories.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';

// Logprobs and rewards chosen so that float32 rounding changes them: the test sees the rounding, not a no-op.
const seedTwoTurns: ExportedTrajectory = {
  trajectory_id: 'traj-seed',
  qid: 'q-π-1',
  task_id: 5_000_000_000,
  status: 'completed',
  layout: 'seed',
  environment: 'guess-number',
  packed_input_ids: [1, 2, 3, 10, 11, 1, 2, 3, 10, 11, 20, 30],
  packed_logprobs: [0, 0, -0.1, -0.2, 0, 0, 0, 0, 0, 0, -0.3],
  prompt_mask: [true, true, true, false, false, true, true, true, true, true, true, false],
  seq_no_eos_mask: [false, true],
  packed_prompts: [1, 2, 3],
  version_start: [4, 5],
  version_end: [5, 6],
  rewards: [0.9, 1.1],
  birth_time: 1_730_000_000_123,
  seqlens: [5, 7],
  prompt_lens: [3, 6],
  successes: [false, true],
  raw_rewards: [-0.7, 1.3],
  token_versions: [-1, -1, -1, 4, 5, -1, -1, -1, 4, 5, -1, 6],
  end_reason: 'done',
  temperature: 0.7,
  top_p: 0.95,
  top_k: 20,
  min_p: 0.05,
  repetition_penalty: 1.1,
};

const concatOneTurn: ExportedTrajectory = {
  trajectory_id: 'traj-concat',
  qid: 'q2',
  task_id: null,
  status: 'completed',
  layout: 'concat',
  environment: 'math',
  packed_input_ids: [7, 8, 9, 2_000_000_000],
  packed_logprobs: [0, 0, -1e-8],
  prompt_mask: [true, true, true, false],
  seq_no_eos_mask: [false],
  packed_prompts: [7, 8, 9],
  version_start: [0],
  version_end: [0],
  rewards: [1],
  birth_time: 0,
  seqlens: [4],
  prompt_lens: [3],
  successes: [true],
  raw_rewards: [1],
  token_versions: [-1, -1, -1, 0],
  end_reason: 'turns',
  temperature: 1,
  top_p: 1,
  top_k: -1,
  min_p: 0,
  repetition_penalty: 1,
};

const failed: ExportedTrajectory = {
  trajectory_id: 'traj-failed',
  qid: 'q3',
  task_id: 7,
  status: 'failed',
  error: 'VerifierTimeout: turn 0',
  layout: 'seed',
  environment: null,
  failure_type: 'VerifierTimeout',
  failure_class: 'data',
  packed_input_ids: [],
  packed_logprobs: [],
  prompt_mask: [],
  seq_no_eos_mask: [],
  packed_prompts: [],
  version_start: [],
  version_end: [],
  rewards: [],
  birth_time: 1_730_000_000_456,
  seqlens: [],
  prompt_lens: [],
  successes: [],
  raw_rewards: [],
  token_versions: [],
  end_reason: null,
  temperature: null,
  top_p: null,
  top_k: null,
  min_p: null,
  repetition_penalty: null,
};

const consumedStale: ExportedTrajectory = {
  ...concatOneTurn,
  trajectory_id: 'traj-stale',
  group_id: 'group-a',
  staleness: 3,
  stale: true,
  packed_logprobs: [0, 0, -2.5e-3],
};

const consumedFresh: ExportedTrajectory = { ...seedTwoTurns, trajectory_id: 'traj-fresh', group_id: 'group-a', staleness: 0, stale: false };

const rows = [seedTwoTurns, concatOneTurn, failed, consumedStale, consumedFresh];

const LIST_DTYPES: Record<string, string> = {
  packed_input_ids: 'List<Int32>',
  packed_prompts: 'List<Int32>',
  token_versions: 'List<Int32>',
  seqlens: 'List<Int32>',
  prompt_lens: 'List<Int32>',
  version_start: 'List<Int32>',
  version_end: 'List<Int32>',
  packed_logprobs: 'List<Float32>',
  rewards: 'List<Float32>',
  raw_rewards: 'List<Float32>',
  prompt_mask: 'List<Int8>',
  seq_no_eos_mask: 'List<Int8>',
  successes: 'List<Int8>',
};
const VALUE_ARRAYS: Record<string, unknown> = { 'List<Int32>': Int32Array, 'List<Float32>': Float32Array, 'List<Int8>': Int8Array };

/** What a row's list should read back as: booleans as 0/1, floats rounded to float32. */
function expectedList(row: ExportedTrajectory, name: string): number[] {
  const values = row[name as keyof ExportedTrajectory] as (number | boolean)[];
  return values.map((v) => (LIST_DTYPES[name] === 'List<Float32>' ? Math.fround(v as number) : Number(v)));
}

/** Checks every column of `table` against `expected`, batch by batch, through the packed values and offsets. */
function expectRoundTrip(table: Table, expected: readonly ExportedTrajectory[]): void {
  expect(table.numRows).toBe(expected.length);
  let first = 0;
  for (const batch of table.batches) {
    const batchRows = expected.slice(first, first + batch.numRows);
    for (const [name, dtype] of Object.entries(LIST_DTYPES)) {
      const data = batch.getChild(name)!.data[0]!;
      const lists = batchRows.map((row) => expectedList(row, name));
      const offsets = [0];
      for (const list of lists) offsets.push(offsets.at(-1)! + list.length);
      // Arrow JS keeps the IPC buffer's padding: only the first numRows + 1 offsets are the column's.
      expect(Array.from(data.valueOffsets.subarray(0, batch.numRows + 1)), name).toEqual(offsets);
      const values = data.children[0]!.values.subarray(0, offsets.at(-1));
      expect(values, name).toBeInstanceOf(VALUE_ARRAYS[dtype]);
      expect(Array.from(values), name).toEqual(lists.flat());
    }
    batchRows.forEach((row, i) => {
      expect(batch.get(i)!.toJSON(), row.trajectory_id).toMatchObject({
        trajectory_id: row.trajectory_id,
        qid: row.qid,
        status: row.status,
        layout: row.layout,
        environment: row.environment,
        end_reason: row.end_reason,
        error: row.error ?? null,
        group_id: row.group_id ?? null,
        failure_type: row.failure_type ?? null,
        failure_class: row.failure_class ?? null,
        task_id: row.task_id === null ? null : BigInt(row.task_id),
        birth_time: BigInt(row.birth_time),
        staleness: row.staleness ?? null,
        stale: row.stale ?? null,
        // Float64: a temperature of 0.7 reads back as 0.7, not as float32's 0.699999988.
        temperature: row.temperature,
        top_p: row.top_p,
        top_k: row.top_k,
        min_p: row.min_p,
        repetition_penalty: row.repetition_penalty,
      });
    });
    first += batch.numRows;
  }
}

/** An output that keeps what it is given; a slow one acknowledges each write a tick later, so writers see backpressure. */
function collector({ slow = false } = {}): { out: Writable; bytes: () => Buffer } {
  const chunks: Buffer[] = [];
  const out = new Writable({
    highWaterMark: slow ? 1 : undefined,
    write(chunk, _encoding, done) {
      chunks.push(chunk);
      if (slow) setImmediate(done);
      else done();
    },
  });
  return { out, bytes: () => Buffer.concat(chunks) };
}

/** The rows as an async source that notes how many bytes had reached the output when the last row was asked for. */
function watchedSource(bytes: () => Buffer, all = rows): { source: AsyncIterable<ExportedTrajectory>; writtenBeforeLastRow: () => number } {
  let written = -1;
  async function* source() {
    for (const [i, row] of all.entries()) {
      if (i === all.length - 1) written = bytes().length;
      yield row;
    }
  }
  return { source: source(), writtenBeforeLastRow: () => written };
}

function readParquetTable(bytes: Uint8Array): Table {
  return tableFromIPC(parquet.readParquet(bytes).intoIPCStream());
}

describe('trajectoryTable', () => {
  it('is one record batch with the documented dtypes and the format version', () => {
    const table = trajectoryTable(rows);
    expect(table.batches).toHaveLength(1);
    expect(table.schema.metadata.get('ratchet.format_version')).toBe('1');
    const dtypes = Object.fromEntries(table.schema.fields.map((field) => [field.name, String(field.type)]));
    expect(dtypes).toMatchObject({
      ...LIST_DTYPES,
      trajectory_id: 'Utf8',
      qid: 'Utf8',
      status: 'Utf8',
      layout: 'Utf8',
      environment: 'Utf8',
      end_reason: 'Utf8',
      error: 'Utf8',
      failure_type: 'Utf8',
      failure_class: 'Utf8',
      group_id: 'Utf8',
      task_id: 'Int64',
      birth_time: 'Int64',
      staleness: 'Int32',
      stale: 'Bool',
      temperature: 'Float64',
      top_p: 'Float64',
      top_k: 'Int32',
      min_p: 'Float64',
      repetition_penalty: 'Float64',
    });
    expect(TRAJECTORY_COLUMNS.map((column) => [column.name, column.dtype])).toEqual(Object.entries(dtypes));
  });

  it('has a column for every exported field, so a new field cannot be dropped silently', () => {
    const names = TRAJECTORY_COLUMNS.map((column) => column.name).sort();
    expect(names).toEqual(Object.keys({ ...consumedStale, error: '', failure_type: '', failure_class: '' }).sort());
  });

  it('matches the column table in docs/trainer-export.md', () => {
    const documented = readFileSync(new URL('../../docs/trainer-export.md', import.meta.url), 'utf8')
      .split('\n')
      .flatMap((line) => /^\| `(\w+)` \| ([^|]+) \| (.+) \|$/.exec(line)?.slice(1) ?? []);
    const expected = TRAJECTORY_COLUMNS.flatMap((c) => [c.name, `${c.dtype}${c.nullable ? ', nullable' : ''}`, c.meaning]);
    expect(documented).toEqual(expected);
  });

  it('marks only the optional columns nullable', () => {
    const nullable = TRAJECTORY_COLUMNS.filter((column) => column.nullable).map((column) => column.name);
    expect(nullable).toEqual([
      'task_id',
      'environment',
      'end_reason',
      'error',
      'failure_type',
      'failure_class',
      'group_id',
      'staleness',
      'stale',
      'temperature',
      'top_p',
      'top_k',
      'min_p',
      'repetition_penalty',
    ]);
  });
});

describe('arrowFileBytes', () => {
  it('round-trips every column, values and offsets, in one record batch', () => {
    const bytes = arrowFileBytes(rows);
    expect(Buffer.from(bytes.subarray(0, 6)).toString()).toBe('ARROW1');
    expect(Buffer.from(bytes.subarray(-6)).toString()).toBe('ARROW1');
    const table = tableFromIPC(bytes);
    expect(table.batches).toHaveLength(1);
    expectRoundTrip(table, rows);
  });

  it('reads back a failed trajectory as empty lists and a null end_reason', () => {
    const table = tableFromIPC(arrowFileBytes([failed]));
    expect(table.getChild('packed_input_ids')!.get(0)!.length).toBe(0);
    expect(table.getChild('end_reason')!.get(0)).toBeNull();
    expect(table.getChild('error')!.get(0)).toBe('VerifierTimeout: turn 0');
  });

  it("carries a failed trajectory's type and class, null on completed rows", () => {
    const table = tableFromIPC(arrowFileBytes([seedTwoTurns, failed]));
    expect(table.getChild('failure_type')!.toArray()).toEqual([null, 'VerifierTimeout']);
    expect(table.getChild('failure_class')!.toArray()).toEqual([null, 'data']);
    expect(table.getChild('failure_type')!.nullCount).toBe(1);
  });
});

describe('writeArrowFile', () => {
  it('writes one record batch per rowsPerBatch rows and returns the row count', async () => {
    const { out, bytes } = collector();
    expect(await writeArrowFile(rows, out, { rowsPerBatch: 2 })).toBe(5);
    const table = tableFromIPC(bytes());
    expect(table.batches.map((batch) => batch.numRows)).toEqual([2, 2, 1]);
    expectRoundTrip(table, rows);
  });

  it('writes a random-access file whose last batch can be read directly', async () => {
    const { out, bytes } = collector();
    await writeArrowFile(rows, out, { rowsPerBatch: 2 });
    const reader = RecordBatchReader.from(bytes()).open();
    if (!reader.isFile()) throw new Error('expected an Arrow IPC file, got a stream');
    const last = (await reader.readRecordBatch(2))!;
    expect(last.get(0)!.toJSON().trajectory_id).toBe('traj-fresh');
    expect(reader.schema.metadata.get('ratchet.format_version')).toBe('1');
  });

  it('streams into a slow output: bytes arrive before the source is exhausted', async () => {
    const { out, bytes } = collector({ slow: true });
    const { source, writtenBeforeLastRow } = watchedSource(bytes);
    await writeArrowFile(source, out, { rowsPerBatch: 2 });
    // Magic, schema and the first two batches (about 1.5 KB each) are out before the last row is read.
    expect(writtenBeforeLastRow()).toBeGreaterThan(bytes().length / 2);
    expectRoundTrip(tableFromIPC(bytes()), rows);
  });

  it('writes a readable file with the schema when there are no rows', async () => {
    const { out, bytes } = collector();
    expect(await writeArrowFile([], out)).toBe(0);
    const table = tableFromIPC(bytes());
    expect(table.numRows).toBe(0);
    expect(table.schema.fields.map((field) => field.name)).toEqual(TRAJECTORY_COLUMNS.map((column) => column.name));
  });

  it('rejects a rowsPerBatch that is not a positive integer', async () => {
    await expect(writeArrowFile(rows, collector().out, { rowsPerBatch: 0 })).rejects.toThrow(/rowsPerBatch/);
  });
});

describe('parquet', () => {
  it('parquetBytes is a zstd Parquet file that reads back with the same values and dtypes', async () => {
    const bytes = parquetBytes(rows);
    expect(Buffer.from(bytes.subarray(0, 4)).toString()).toBe('PAR1');
    expect(Buffer.from(bytes.subarray(-4)).toString()).toBe('PAR1');
    const table = readParquetTable(bytes);
    expectRoundTrip(table, rows);
    expect(table.schema.metadata.get('ratchet.format_version')).toBe('1');
    const file = await parquet.ParquetFile.fromFile(new Blob([bytes]));
    expect(file.metadata().numRowGroups()).toBe(1);
    expect(file.metadata().rowGroup(0).column(0).compression()).toBe(parquet.Compression.ZSTD);
  });

  it('writeParquetFile writes one row group per rowsPerBatch rows', async () => {
    const { out, bytes } = collector();
    expect(await writeParquetFile(rows, out, { rowsPerBatch: 2 })).toBe(5);
    const file = await parquet.ParquetFile.fromFile(new Blob([bytes()]));
    expect(
      file
        .metadata()
        .rowGroups()
        .map((group) => group.numRows()),
    ).toEqual([2, 2, 1]);
    expectRoundTrip(readParquetTable(bytes()), rows);
  });

  it('writeParquetFile streams into a slow output: row groups arrive before the source is exhausted', async () => {
    // The parquet stream reads about two chunks ahead of the bytes it emits, so this needs more chunks than rows has.
    const many = [...rows, ...rows, ...rows];
    const { out, bytes } = collector({ slow: true });
    const { source, writtenBeforeLastRow } = watchedSource(bytes, many);
    await writeParquetFile(source, out, { rowsPerBatch: 2 });
    expect(writtenBeforeLastRow()).toBeGreaterThan(0);
    expectRoundTrip(readParquetTable(bytes()), many);
  });

  it('writeParquetFile writes a readable file when there are no rows', async () => {
    const { out, bytes } = collector();
    expect(await writeParquetFile([], out)).toBe(0);
    expect(readParquetTable(bytes()).numRows).toBe(0);
  });
});
