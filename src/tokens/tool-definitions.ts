import { z } from 'zod';

/** A JSON Schema object (draft 2020-12 or 7), as a tool's `parameters` are written. */
export type JsonSchema = Record<string, unknown>;

/**
 * A tool as OpenAI's chat completions API declares it and as Hugging Face chat templates receive it in `tools`:
 * a function with a JSON Schema for its arguments.
 */
export interface ToolDefinition {
  type: 'function';
  function: { name: string; description?: string; parameters?: JsonSchema };
}

/** A function tool from its name, argument schema and description. */
export function functionTool(name: string, parameters: JsonSchema, description?: string): ToolDefinition {
  return { type: 'function', function: { name, ...(description === undefined ? {} : { description }), parameters } };
}

/** A tool list that cannot be offered: a duplicate or empty name, or a schema the validator cannot read. */
export class ToolDefinitionError extends Error {
  override readonly name = 'ToolDefinitionError';
}

/** The tools offered to a trajectory, each with its argument schema compiled once. */
export interface ToolSet {
  readonly definitions: readonly ToolDefinition[];
  readonly names: readonly string[];
  has(name: string): boolean;
  /** What is wrong with `args` for the tool `name`, one line per problem (`path: message`); empty when they match. */
  argumentProblems(name: string, args: unknown): string[];
}

/**
 * Compiles the tools' JSON Schemas with zod's `fromJSONSchema` (zod is already a dependency; its messages are stable
 * for a pinned version, so the observation a malformed call becomes is the same on every worker).
 * Throws ToolDefinitionError: a bad tool list is the environment's bug, found before any turn runs.
 */
export function toolSet(definitions: readonly ToolDefinition[]): ToolSet {
  const schemas = new Map<string, z.ZodType>();
  for (const definition of definitions) {
    const name = definition.function?.name;
    if (typeof name !== 'string' || name === '') throw new ToolDefinitionError('every tool needs a non-empty function.name');
    if (schemas.has(name)) throw new ToolDefinitionError(`tool ${name} is declared twice`);
    try {
      schemas.set(name, z.fromJSONSchema((definition.function.parameters ?? { type: 'object' }) as Parameters<typeof z.fromJSONSchema>[0]));
    } catch (error) {
      throw new ToolDefinitionError(`tool ${name}: its parameters are not a usable JSON Schema (${(error as Error).message})`);
    }
  }
  return {
    definitions,
    names: [...schemas.keys()],
    has: (name) => schemas.has(name),
    argumentProblems: (name, args) => {
      const schema = schemas.get(name);
      if (!schema) return [`no tool named ${name}`];
      const checked = schema.safeParse(args);
      if (checked.success) return [];
      return checked.error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`);
    },
  };
}
