import { z } from 'zod';
import { apps, arealCode, livecodebench } from './code-shapes.js';
import type { Problem } from './problem.js';
import { ownEnvironment } from './row-environment.js';

/** A parsed row before it gets its fallback qid, which depends on the file and line. */
export type RowProblem = Omit<Problem, 'qid'> & { id?: string };

export type Shape = 'gsm8k' | 'math' | 'areal' | 'areal_code' | 'apps' | 'livecodebench';

// Far beyond any real problem or solution (MATH-500's longest field is ~3.4k characters); a longer field
// is a corrupt row, and keeping it would bloat every prompt and stored trajectory.
const MAX_FIELD_CHARS = 1_000_000;

const text = z
  .string({
    error: (issue) => (issue.input === undefined ? 'is missing' : `must be a string, got ${typeOf(issue.input)}`),
  })
  .max(MAX_FIELD_CHARS, {
    error: (issue) => `is over the 1 MB field limit (${String((issue.input as string).length)} characters)`,
  })
  .refine((value) => value.trim() !== '', 'is empty');

const taskId = z
  .number({ error: (issue) => `must be an integer, got ${typeOf(issue.input)}` })
  .int({ error: (issue) => `must be an integer, got ${String(issue.input)}` })
  .optional();

const gsm8k = z
  .object({ question: text, answer: text, task_id: taskId })
  // The verifier reads GSM8K's final answer after `####`; a row without one can never be scored.
  .refine((row) => /####\s*\S/.test(row.answer), { message: 'has no "#### <final answer>" line', path: ['answer'] })
  .transform((row): RowProblem => ({ taskId: row.task_id, problem: row.question, gold: [row.answer], source: 'gsm8k' }));

// A row for an environment of its own (a game served by its worker) may have no answer: nothing judges one.
const math = z
  .object({ problem: text, answer: text.optional(), unique_id: text.optional(), task_id: taskId, environment: z.unknown().optional() })
  .transform((row, context): RowProblem => {
    if (row.answer === undefined && !ownEnvironment(row.environment)) context.addIssue({ code: 'custom', path: ['answer'], message: 'is missing' });
    return {
      id: row.unique_id,
      taskId: row.task_id,
      problem: row.problem,
      gold: row.answer === undefined ? [] : [row.answer],
      source: 'math',
    };
  });

const areal = z
  .object({
    query_id: text,
    prompt: text,
    solutions: z.array(text, { error: (issue) => `must be an array of strings, got ${typeOf(issue.input)}` }).min(1, 'is empty'),
    // AReaL's own loader treats a row without `task` as math.
    task: z.string({ error: (issue) => `must be a string, got ${typeOf(issue.input)}` }).optional(),
    task_id: taskId,
  })
  .refine((row) => row.task === undefined || row.task === 'math', {
    error: (issue) => `unsupported task ${JSON.stringify((issue.input as { task: unknown }).task)} (only "math" and "code" load)`,
  })
  .transform((row): RowProblem => ({
    id: row.query_id,
    taskId: row.task_id,
    problem: row.prompt,
    gold: row.solutions,
    source: 'areal',
  }));

/** The zod schema for each row shape; each one also maps the row onto a problem. */
export const schemas = { gsm8k, math, areal, areal_code: arealCode, apps, livecodebench } as const;

export const shapeNames: Record<Shape, string> = {
  gsm8k: 'GSM8K',
  math: 'MATH',
  areal: 'AReaL',
  areal_code: 'AReaL code',
  apps: 'APPS/TACO',
  livecodebench: 'LiveCodeBench',
};

/**
 * Picks a row's shape from its distinctive keys, so a row missing a required field is reported against
 * the shape it was meant to be (`MATH row: "answer" is missing`) rather than as unknown.
 */
export function detectShape(row: Record<string, unknown>): Shape | undefined {
  if (row.task === 'code') return 'areal_code';
  if ('question_content' in row || 'public_test_cases' in row) return 'livecodebench';
  if ('question' in row && 'input_output' in row) return 'apps';
  if ('query_id' in row || 'solutions' in row || 'prompt' in row) return 'areal';
  if ('question' in row) return 'gsm8k';
  if ('problem' in row) return 'math';
  return undefined;
}

export function typeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
