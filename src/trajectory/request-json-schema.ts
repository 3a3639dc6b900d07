import { z } from 'zod';
import { trajectoryRequestSchema } from './request.js';

/**
 * Where the generated JSON Schema is committed, relative to the repository root: inside the Python package, which
 * validates every request it builds against it before it starts anything.
 */
export const REQUEST_JSON_SCHEMA_PATH = 'python/ratchet_rollouts/trajectory-request.schema.json';

/**
 * The JSON Schema of a trajectory request, as committed: the contract for clients in other languages.
 * Byte limits, the group id rule and the payload size cannot be said in JSON Schema; they are in the
 * descriptions, and the workflow enforces them.
 */
export function trajectoryRequestJsonSchema(): string {
  const schema = z.toJSONSchema(trajectoryRequestSchema, { io: 'input', target: 'draft-2020-12' });
  return `${JSON.stringify(schema, null, 2)}\n`;
}
