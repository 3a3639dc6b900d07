import { defineConfig } from 'vitest/config';

// `npm run test:real-servers`: files that start a real vLLM server. Kept out of `npm test` (its include is
// test/**/*.test.ts) because they need `npm run setup:vllm` and a few minutes of one core each.
export default defineConfig({
  test: {
    include: ['test/real-servers/**/*.real.ts'],
    setupFiles: ['test/setup-logging.ts'],
    // One vLLM at a time on a 2-core machine.
    fileParallelism: false,
    testTimeout: 180_000,
    hookTimeout: 420_000,
  },
});
