import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// Issue 36: fields of the request (environment, environmentArgs, code, answerExtraction, turnAffinity) and its
// environment timeouts were missing from docs/trajectory-request.md. Every field the published JSON Schema knows
// must have a row of its own there.
const DOC = readFileSync(new URL('../../docs/trajectory-request.md', import.meta.url), 'utf8');
const SCHEMA = JSON.parse(
  readFileSync(new URL('../../python/ratchet_rollouts/trajectory-request.schema.json', import.meta.url), 'utf8'),
) as JsonSchema;

interface JsonSchema {
  properties?: Record<string, JsonSchema>;
  anyOf?: JsonSchema[];
  $ref?: string;
  $defs?: Record<string, JsonSchema>;
}

/** The object schema behind a property (through `$ref` and an optional's `anyOf`). */
function objectOf(schema: JsonSchema | undefined): JsonSchema | undefined {
  if (!schema) return undefined;
  if (schema.$ref) return objectOf(SCHEMA.$defs?.[schema.$ref.replace('#/$defs/', '')]);
  if (schema.properties) return schema;
  return schema.anyOf?.map(objectOf).find(Boolean);
}

/** Names in the first column of the document's table rows (`| \`name\` | …`). */
const documented = new Set([...DOC.matchAll(/^\| `([\w.]+)`/gm)].map((match) => match[1]));

describe('docs/trajectory-request.md', () => {
  it.each([
    ['the request', SCHEMA],
    ['options', objectOf(SCHEMA.properties?.options)],
    ['timeouts', objectOf(SCHEMA.properties?.timeouts)],
  ])('documents every field of %s', (_what, schema) => {
    const fields = Object.keys(objectOf(schema)?.properties ?? {});
    expect(fields.length).toBeGreaterThan(3);
    expect(fields.filter((field) => !documented.has(field))).toEqual([]);
  });

  it('names every end reason', () => {
    for (const reason of ['turns', 'done', 'early_stop', 'context_exhausted']) expect(DOC).toContain(`\`${reason}\``);
  });
});
