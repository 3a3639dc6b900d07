import type { z } from 'zod';
import { rowEnvironment } from './row-environment.js';
import { detectShape, schemas, shapeNames, typeOf, type RowProblem } from './shapes.js';

export type RowResult = { ok: true; row: RowProblem } | { ok: false; message: string };

/** Parses one non-blank JSONL line into a problem, or says precisely why the row is unusable. */
export function parseRow(line: string): RowResult {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { ok: false, message: `invalid JSON: ${(error as Error).message}` };
  }
  if (typeOf(value) !== 'object') return { ok: false, message: `row must be a JSON object, got ${typeOf(value)}` };

  const record = value as Record<string, unknown>;
  const shape = detectShape(record);
  if (shape === undefined) {
    const keys = Object.keys(record).join(', ') || 'none';
    return {
      ok: false,
      message: `unknown row shape (keys: ${keys}); expected GSM8K question/answer, MATH problem/answer, AReaL query_id/prompt/solutions (or task "code" with input_output), APPS/TACO question/input_output or LiveCodeBench question_content/public_test_cases`,
    };
  }

  const parsed = schemas[shape].safeParse(record);
  if (!parsed.success) return { ok: false, message: `${shapeNames[shape]} row: ${parsed.error.issues.map(describeIssue).join('; ')}` };
  // Any shape may name its environment and the environment's arguments.
  const environment = rowEnvironment(record);
  if (!environment.ok) return { ok: false, message: `${shapeNames[shape]} row: ${environment.message}` };
  return { ok: true, row: { ...parsed.data, ...environment.value } };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.path.length === 0) return issue.message;
  const field = issue.path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`));
  return `"${field.join('')}" ${issue.message}`;
}
