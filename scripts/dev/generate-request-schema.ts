// Writes python/ratchet_rollouts/trajectory-request.schema.json from the zod schema (`npm run schema`); a test fails when the
// committed file and the schema disagree, so the docs and other languages' clients cannot drift.
import { writeFile } from 'node:fs/promises';
import { REQUEST_JSON_SCHEMA_PATH, trajectoryRequestJsonSchema } from '../../src/trajectory/request-json-schema.js';

await writeFile(REQUEST_JSON_SCHEMA_PATH, trajectoryRequestJsonSchema());
process.stdout.write(`wrote ${REQUEST_JSON_SCHEMA_PATH}\n`);
