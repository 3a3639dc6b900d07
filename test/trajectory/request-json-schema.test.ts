import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { REQUEST_JSON_SCHEMA_PATH, trajectoryRequestJsonSchema } from '../../src/trajectory/request-json-schema.js';

describe('the committed JSON Schema of a trajectory request', () => {
  it('is what the zod schema generates (run `npm run schema` after changing the schema)', async () => {
    const committed = await readFile(REQUEST_JSON_SCHEMA_PATH, 'utf8');
    expect(committed).toBe(trajectoryRequestJsonSchema());
  });

  it('carries the rules other languages need: required fields, closed objects, ranges and the new timeouts', () => {
    const schema = JSON.parse(trajectoryRequestJsonSchema());
    expect(schema.required).toEqual(['trajectoryId', 'qid', 'problem', 'gold']);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.options.additionalProperties).toBe(false);
    expect(schema.properties.options.properties.turns).toMatchObject({ type: 'integer', minimum: 1, maximum: 64, default: 5 });
    expect(schema.properties.options.properties.discount).toMatchObject({ exclusiveMinimum: 0, maximum: 1 });
    expect(schema.properties.timeouts.properties.admissionRecheckMaxSeconds).toMatchObject({ type: 'number', default: 1800 });
    expect(schema.properties.timeouts.properties.admissionRechecksPerRun).toMatchObject({ type: 'integer', minimum: 1, default: 100 });
    expect(schema.properties.group.properties.run.required).toEqual(['runId', 'maxHeadOffpolicyness', 'batchSize', 'maxConcurrent']);
    // The pattern must mean the same in other regex dialects (Python's re reads \uXXXX too).
    expect(new RegExp(schema.properties.problem.pattern).test('a\u0000b')).toBe(false);
    expect(new RegExp(schema.properties.qid.pattern).test('gsm8k-17')).toBe(true);
  });
});
