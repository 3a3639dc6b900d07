import type { JsonValue } from '../environments/environment.js';

/** A row's environment, as `environment` and `environment_args` (any row shape may carry them). */
export interface RowEnvironment {
  environment?: string;
  environmentArgs?: { [key: string]: JsonValue };
}

// As the request schema has it (src/trajectory/request.ts): the name is part of a task queue's name.
const ENVIRONMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

const typeOf = (value: unknown): string => (value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value);

/** Environments that judge an answer against the row's gold: a row for any other may leave its answer out. */
const JUDGED_BY_GOLD = new Set(['math', 'math-python-tool', 'code']);

/** The row names an environment that needs no gold answer (one served on its own task queue, a game). */
export function ownEnvironment(environment: unknown): boolean {
  return typeof environment === 'string' && !JUDGED_BY_GOLD.has(environment);
}

/** The row's `environment` and `environment_args`, or the message saying why they are unusable. */
export function rowEnvironment(record: Record<string, unknown>): { ok: true; value: RowEnvironment } | { ok: false; message: string } {
  const value: RowEnvironment = {};
  if ('environment' in record && record.environment !== undefined) {
    const name = record.environment;
    if (typeof name !== 'string') return { ok: false, message: `"environment" must be a string, got ${typeOf(name)}` };
    if (!ENVIRONMENT_NAME.test(name))
      return { ok: false, message: '"environment" must be 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit' };
    value.environment = name;
  }
  if ('environment_args' in record && record.environment_args !== undefined) {
    const args = record.environment_args;
    if (typeOf(args) !== 'object') return { ok: false, message: `"environment_args" must be an object, got ${typeOf(args)}` };
    value.environmentArgs = args as { [key: string]: JsonValue };
  }
  return { ok: true, value };
}
