import {
  Bool,
  type Data,
  type DataType,
  Field,
  Float32,
  Float64,
  Int8,
  Int32,
  Int64,
  List,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Utf8,
} from 'apache-arrow';
import type { ExportedTrajectory } from '../store/read/trajectory-export.js';

/** Bumped when a column changes meaning or dtype, so a trainer can refuse a file it does not understand. */
export const TRAJECTORY_FORMAT_VERSION = '1';

type Row = ExportedTrajectory;
type Element = Int32 | Float32 | Int8;
type PackedArray = Int32Array | Float32Array | Int8Array | Uint8Array;

interface ColumnSpec {
  name: string;
  type: DataType;
  nullable: boolean;
  meaning: string;
  build(rows: readonly Row[]): Data;
}

/**
 * The columns, in file order. List columns are built from one packed typed array plus Int32 offsets, the
 * layout a trainer reads without copying (`values.to_numpy(zero_copy_only=True)`, `offsets`); masks are
 * Int8 0/1 rather than Arrow's bit-packed Bool, which numpy and torch cannot view in place.
 */
const COLUMNS: readonly ColumnSpec[] = [
  text('trajectory_id', (r) => r.trajectory_id, 'workflow id of the trajectory'),
  text('qid', (r) => r.qid, 'id of the question in its dataset'),
  int64('task_id', (r) => r.task_id, true, "the dataset row's integer task_id, when it has one"),
  text('status', (r) => r.status, '"completed" or "failed" (failed rows have empty lists and an error)'),
  text('layout', (r) => r.layout, '"seed" (one sequence per turn) or "concat" (one sequence)'),
  nullableText('environment', (r) => r.environment, 'the environment it ran in ("math", "code", a user\'s); null when stored before environments'),
  nullableText(
    'end_reason',
    (r) => r.end_reason,
    '"turns", "done" (the environment ended it), "early_stop" or "context_exhausted"; null when failed',
  ),
  nullableText('error', (r) => r.error ?? null, 'why a failed trajectory failed'),
  nullableText('failure_type', (r) => r.failure_type ?? null, 'failed only: the failure\'s type, e.g. "PolicyUnavailable", "ContextExhausted"'),
  nullableText('failure_class', (r) => r.failure_class ?? null, 'failed only: "infrastructure" (a rerun may succeed) or "data" (it cannot)'),
  nullableText('group_id', (r) => r.group_id ?? null, 'consumed batches only: the group (samples of one prompt)'),
  int64('birth_time', (r) => r.birth_time, false, 'start of the trajectory, ms since the Unix epoch'),
  int32('staleness', (r) => r.staleness ?? null, 'consumed batches only: version at hand-out minus oldest token version'),
  bool('stale', (r) => r.stale ?? null, "consumed batches only: staleness above the run's max_head_offpolicyness"),
  float64('temperature', (r) => r.temperature, 'sampling temperature of every output token (0: greedy); null when unknown'),
  float64('top_p', (r) => r.top_p, 'top-p the output tokens were sampled with (1: off); null when unknown'),
  int32('top_k', (r) => r.top_k, 'top-k the output tokens were sampled with (-1: off); null when unknown'),
  float64('min_p', (r) => r.min_p, 'min-p the output tokens were sampled with (0: off); null when unknown'),
  float64('repetition_penalty', (r) => r.repetition_penalty, 'repetition penalty over the context (1: off); null when unknown'),
  list('packed_input_ids', new Int32(), (r) => r.packed_input_ids, 'token ids of every sequence, back to back'),
  list('packed_logprobs', new Float32(), (r) => r.packed_logprobs, 'log p of each next token: seqlens[i] - 1 per sequence'),
  list('prompt_mask', new Int8(), (r) => r.prompt_mask, '1 on context tokens, 0 on generated ones (loss mask = 1 - it)'),
  list('token_versions', new Int32(), (r) => r.token_versions, 'per token: policy version that generated it, -1 for context'),
  list('packed_prompts', new Int32(), (r) => r.packed_prompts, 'token ids of the rendered prompt'),
  list('seqlens', new Int32(), (r) => r.seqlens, 'lengths of the sequences in packed_input_ids'),
  list('prompt_lens', new Int32(), (r) => r.prompt_lens, 'per turn: context length P_t'),
  list('seq_no_eos_mask', new Int8(), (r) => r.seq_no_eos_mask, 'per turn: 1 when the output ended without EOS'),
  list('version_start', new Int32(), (r) => r.version_start, 'per turn: policy version of the first generated token'),
  list('version_end', new Int32(), (r) => r.version_end, 'per turn: policy version of the last generated token'),
  list('successes', new Int8(), (r) => r.successes, 'per turn: 1 when the verifier accepted the answer'),
  list('raw_rewards', new Float32(), (r) => r.raw_rewards, 'per turn: reward r_t'),
  list('rewards', new Float32(), (r) => r.rewards, 'per turn: discounted returns-to-go of r_t'),
];

/** Column, dtype and meaning of every column, for documentation and for tests that check the schema. */
export const TRAJECTORY_COLUMNS: readonly { name: string; dtype: string; nullable: boolean; meaning: string }[] = COLUMNS.map(
  ({ name, type, nullable, meaning }) => ({ name, dtype: String(type), nullable, meaning }),
);

export const TRAJECTORY_SCHEMA = new Schema(
  COLUMNS.map((column) => new Field(column.name, column.type, column.nullable)),
  new Map([['ratchet.format_version', TRAJECTORY_FORMAT_VERSION]]),
);

/** A table of one record batch, one row per trajectory. */
export function trajectoryTable(rows: readonly Row[]): Table {
  return new Table(TRAJECTORY_SCHEMA, trajectoryBatch(rows));
}

export function trajectoryBatch(rows: readonly Row[]): RecordBatch {
  const children = COLUMNS.map((column) => column.build(rows));
  const struct = makeData({ type: new Struct(TRAJECTORY_SCHEMA.fields), length: rows.length, nullCount: 0, children });
  return new RecordBatch(TRAJECTORY_SCHEMA, struct);
}

function list(name: string, element: Element, get: (row: Row) => readonly (number | boolean)[], meaning: string): ColumnSpec {
  const type = new List(new Field('item', element, false));
  return {
    name,
    type,
    nullable: false,
    meaning,
    build: (rows) => {
      const { valueOffsets, values } = pack(rows.map(get), (length) => new element.ArrayType(length));
      // makeData's overloads are per concrete type; Int32, Float32 and Int8 take the same props.
      const child = makeData({ type: element as Int32, length: values.length, nullCount: 0, data: values as Int32Array }) as Data<Element>;
      return makeData({ type, length: rows.length, nullCount: 0, valueOffsets, child });
    },
  };
}

/** Concatenates the lists into one typed array; row i is values[offsets[i] .. offsets[i + 1]). */
function pack<A extends PackedArray>(lists: readonly ArrayLike<number | boolean>[], allocate: (length: number) => A) {
  const valueOffsets = new Int32Array(lists.length + 1);
  lists.forEach((items, i) => {
    valueOffsets[i + 1] = valueOffsets[i]! + items.length;
  });
  const values = allocate(valueOffsets[lists.length]!);
  lists.forEach((items, i) => {
    const start = valueOffsets[i]!;
    // Number(): booleans become 0/1; a Float32Array rounds each value on assignment.
    for (let j = 0; j < items.length; j += 1) values[start + j] = Number(items[j]);
  });
  return { valueOffsets, values };
}

function text(name: string, get: (row: Row) => string, meaning: string): ColumnSpec {
  return { ...nullableText(name, get, meaning), nullable: false };
}

function nullableText(name: string, get: (row: Row) => string | null, meaning: string): ColumnSpec {
  const encoder = new TextEncoder();
  return {
    name,
    type: new Utf8(),
    nullable: true,
    meaning,
    build: (rows) => {
      const strings = rows.map(get);
      const { valueOffsets, values } = pack(
        strings.map((s) => encoder.encode(s ?? '')),
        (length) => new Uint8Array(length),
      );
      return makeData({ type: new Utf8(), length: rows.length, valueOffsets, data: values, ...validity(strings) });
    },
  };
}

function int64(name: string, get: (row: Row) => number | null, nullable: boolean, meaning: string): ColumnSpec {
  return {
    name,
    type: new Int64(),
    nullable,
    meaning,
    build: (rows) => {
      const numbers = rows.map(get);
      const data = BigInt64Array.from(numbers, (n) => BigInt(n ?? 0));
      return makeData({ type: new Int64(), length: rows.length, data, ...validity(numbers) });
    },
  };
}

function int32(name: string, get: (row: Row) => number | null, meaning: string): ColumnSpec {
  return {
    name,
    type: new Int32(),
    nullable: true,
    meaning,
    build: (rows) => {
      const numbers = rows.map(get);
      return makeData({ type: new Int32(), length: rows.length, data: Int32Array.from(numbers, (n) => n ?? 0), ...validity(numbers) });
    },
  };
}

function float64(name: string, get: (row: Row) => number | null, meaning: string): ColumnSpec {
  return {
    name,
    type: new Float64(),
    nullable: true,
    meaning,
    build: (rows) => {
      const numbers = rows.map(get);
      return makeData({ type: new Float64(), length: rows.length, data: Float64Array.from(numbers, (n) => n ?? 0), ...validity(numbers) });
    },
  };
}

function bool(name: string, get: (row: Row) => boolean | null, meaning: string): ColumnSpec {
  return {
    name,
    type: new Bool(),
    nullable: true,
    meaning,
    build: (rows) => {
      const flags = rows.map(get);
      return makeData({ type: new Bool(), length: rows.length, data: bitmap(flags.map((f) => f === true)), ...validity(flags) });
    },
  };
}

/** Arrow's validity bitmap; left out (nullCount 0) when every value is present. */
function validity(values: readonly unknown[]): { nullCount: number; nullBitmap?: Uint8Array } {
  const present = values.map((value) => value !== null && value !== undefined);
  const nullCount = present.filter((p) => !p).length;
  return nullCount === 0 ? { nullCount } : { nullCount, nullBitmap: bitmap(present) };
}

/** Least-significant bit first, as Arrow lays out validity and Bool buffers. */
function bitmap(bits: readonly boolean[]): Uint8Array {
  const bytes = new Uint8Array(Math.ceil(bits.length / 8));
  bits.forEach((bit, i) => {
    if (bit) bytes[i >> 3]! |= 1 << (i & 7);
  });
  return bytes;
}
