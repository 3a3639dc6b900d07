import path from 'node:path';
import { defineConfig } from 'vite';

// `npm run demo:train` runs under vite-node, not Vitest: the seed-invariant checks it shares with the tests get
// Vitest's matchers without Vitest's runner.
export default defineConfig({
  resolve: { alias: [{ find: /^vitest$/, replacement: path.resolve(import.meta.dirname, 'standalone-expect.ts') }] },
});
