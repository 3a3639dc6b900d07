import { z } from 'zod';
import { parseTests } from '../code/input-output.js';
import type { CodeTask } from '../code/types.js';
import type { RowProblem } from './shapes.js';

// The shapes of code rows: AReaL's `task: "code"`, APPS / TACO and LiveCodeBench, each mapped onto AReaL's
// `input_output` test cases. Reference solutions, where a row has them, become the problem's gold (the
// simulated policy answers from them); the tests become `code`.

const MAX_FIELD_CHARS = 1_000_000;
const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);
const text = z
  .string({ error: (issue) => (issue.input === undefined ? 'is missing' : `must be a string, got ${typeOf(issue.input)}`) })
  .max(MAX_FIELD_CHARS, { error: (issue) => `is over the 1 MB field limit (${String((issue.input as string).length)} characters)` })
  .refine((value) => value.trim() !== '', 'is empty');
const positive = z.number({ error: (issue) => `must be a number, got ${typeOf(issue.input)}` }).positive('must be positive');
const taskId = z
  .number({ error: (issue) => `must be an integer, got ${typeOf(issue.input)}` })
  .int()
  .optional();

/** Adds a zod issue for every problem of a test-case field, and returns the task when there is none. */
function tests(context: z.RefinementCtx, raw: unknown, field: string, limits: Omit<CodeTask, 'tests'> = {}): CodeTask | undefined {
  const parsed = parseTests(raw);
  if (!parsed.ok) {
    // The message names the field and item (`"input_output.outputs[0]" must be a string`), so no path.
    context.addIssue({ code: 'custom', path: [], message: parsed.message.replaceAll('"input_output', `"${field}`) });
    return undefined;
  }
  return { tests: parsed.tests, ...limits };
}

function jsonList(context: z.RefinementCtx, raw: string | undefined, field: string): unknown[] {
  if (raw === undefined || raw.trim() === '') return [];
  try {
    const value: unknown = JSON.parse(raw);
    if (Array.isArray(value)) return value;
  } catch {
    // Reported below.
  }
  context.addIssue({ code: 'custom', path: [field], message: 'must be a JSON list (as a string)' });
  return [];
}

export const arealCode = z
  .object({
    query_id: text,
    prompt: text,
    task: z.literal('code'),
    task_id: taskId,
    input_output: z.unknown().optional(),
    solutions: z.array(z.string({ error: (issue) => `must be a string, got ${typeOf(issue.input)}` })).optional(),
    timeout: positive.optional(),
    memory: positive.optional(),
  })
  .transform((row, context): RowProblem => {
    const limits = { ...(row.timeout === undefined ? {} : { timeoutS: row.timeout }), ...(row.memory === undefined ? {} : { memoryMb: row.memory }) };
    const code = row.input_output === undefined ? missing(context, 'input_output') : tests(context, row.input_output, 'input_output', limits);
    return { id: row.query_id, taskId: row.task_id, problem: row.prompt, gold: row.solutions ?? [], source: 'areal', ...(code ? { code } : {}) };
  });

/** APPS and TACO: `question`, `starter_code`, `solutions` and `input_output` as JSON strings; call-based rows hold argument lists. */
export const apps = z
  .object({
    question: text,
    input_output: z.string({ error: () => 'must be a JSON string' }),
    solutions: z.string().optional(),
    starter_code: z.string().optional(),
    problem_id: z.union([z.string(), z.number()]).optional(),
    task_id: taskId,
  })
  .transform((row, context): RowProblem => {
    const gold = jsonList(context, row.solutions, 'solutions').filter((s): s is string => typeof s === 'string');
    const code = tests(context, appsTests(row.input_output), 'input_output');
    return {
      id: row.problem_id === undefined ? undefined : `apps-${String(row.problem_id)}`,
      taskId: row.task_id,
      problem: withStarter(row.question, row.starter_code),
      gold,
      source: 'apps',
      ...(code ? { code } : {}),
    };
  });

/** LiveCodeBench code generation: public (and, when plain JSON, private) test cases; `metadata.func_name` for functional ones. */
export const livecodebench = z
  .object({
    question_id: z.union([z.string(), z.number()]),
    question_content: text,
    starter_code: z.string().optional(),
    public_test_cases: z.string({ error: () => 'must be a JSON string' }),
    private_test_cases: z.string().optional(),
    metadata: z.string().optional(),
  })
  .transform((row, context): RowProblem => {
    // Private cases usually ship zlib-compressed and pickled; only plain JSON ones are read.
    const cases = [...jsonList(context, row.public_test_cases, 'public_test_cases'), ...plainJsonList(row.private_test_cases)] as Array<
      Record<string, unknown>
    >;
    const fnName = cases.some((c) => c?.testtype === 'functional') ? metadataFunction(row.metadata) : '';
    if (fnName === '' && cases.some((c) => c?.testtype === 'functional')) missing(context, 'metadata.func_name');
    const code = tests(context, { inputs: cases.map((c) => c?.input), outputs: cases.map((c) => c?.output), fn_name: fnName }, 'public_test_cases');
    return {
      id: `lcb-${String(row.question_id)}`,
      problem: withStarter(row.question_content, row.starter_code),
      gold: [],
      source: 'livecodebench',
      ...(code ? { code } : {}),
    };
  });

function missing(context: z.RefinementCtx, field: string): undefined {
  context.addIssue({ code: 'custom', path: [field], message: 'is missing' });
  return undefined;
}

function withStarter(question: string, starter: string | undefined): string {
  return starter?.trim() ? `${question.trim()}\n\nStarter code:\n\`\`\`python\n${starter.trimEnd()}\n\`\`\`` : question;
}

/** APPS keeps call arguments as lists and wraps each return value in a list; AReaL wants JSON lines. */
function appsTests(raw: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return raw;
  }
  if (typeof value !== 'object' || value === null) return value;
  const { inputs, outputs, fn_name: fnName } = value as Record<string, unknown>;
  if (!Array.isArray(inputs) || !Array.isArray(outputs)) return value;
  if (typeof fnName === 'string' && fnName !== '') {
    return {
      fn_name: fnName,
      inputs: inputs.map((args) => (Array.isArray(args) ? args.map((arg) => JSON.stringify(arg)).join('\n') : args)),
      outputs: outputs.map((out) => JSON.stringify(Array.isArray(out) && out.length === 1 ? out[0] : out)),
    };
  }
  const joined = (item: unknown): unknown => (Array.isArray(item) && item.every((x) => typeof x === 'string') ? item.join('\n') : item);
  return { inputs: inputs.map(joined), outputs: outputs.map(joined) };
}

function plainJsonList(raw: string | undefined): unknown[] {
  try {
    const value: unknown = raw ? JSON.parse(raw) : [];
    return Array.isArray(value) ? value : [];
  } catch {
    return [];
  }
}

function metadataFunction(metadata: string | undefined): string {
  try {
    const name = (JSON.parse(metadata ?? '{}') as { func_name?: unknown }).func_name;
    return typeof name === 'string' ? name : '';
  } catch {
    return '';
  }
}
