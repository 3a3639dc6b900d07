import { createRequire } from 'node:module';
import path from 'node:path';
import { beforeAll } from 'vitest';

// Temporal's runtime logger (src/stack/tool-logging.ts), installed before a file's hooks start workers, but only in
// the files that loaded the SDK's worker package while they were collected: installing it loads the SDK's native
// core, about half a second of CPU that most files (no Temporal worker in them) would pay for nothing (issue 38).
const loaded = createRequire(import.meta.url).cache;
const workerPackage = `${path.sep}@temporalio${path.sep}worker${path.sep}`;

beforeAll(async () => {
  if (Object.keys(loaded).some((file) => file.includes(workerPackage))) await import('../src/stack/tool-logging.js');
});
