import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { pauseFor } from '../../scripts/support/paused-process.js';
import { SANDBOXES } from './sandbox-fixtures.js';

// A worker holding a sandbox, in a process of its own so the test can freeze it and the sandbox under it, as a
// stalled CPU worker is frozen: "ready" once the pool is up, then one verdict (JSON) per "check" line. The answer
// works ~0.5 s of its 2 s limit, then prints the expected output.
const workerScript = (tool: string | undefined) => `
  import { createInterface } from 'node:readline';
  import { CodeSandboxPool, verifyCodeAnswer } from ${JSON.stringify(new URL('../../dist/code/index.js', import.meta.url).href)};
  const sandbox = new CodeSandboxPool({ concurrency: 1${tool ? `, tool: ${JSON.stringify(tool)}` : ''} });
  const task = { tests: { inputs: [''], outputs: ['ok'], fnName: '' }, timeoutS: 2, memoryMb: 256 };
  const answer = '\`\`\`python\\nimport time\\nend = time.monotonic() + 0.5\\nwhile time.monotonic() < end:\\n    pass\\nprint("ok")\\n\`\`\`';
  await verifyCodeAnswer(task, answer, { sandbox });
  console.log('ready');
  for await (const line of createInterface({ input: process.stdin })) console.log(JSON.stringify(await verifyCodeAnswer(task, answer, { sandbox })));
`;

describe.each(SANDBOXES)("$name in a worker frozen mid-test (SIGSTOP past the test's limit, then SIGCONT)", ({ tool }) => {
  it('judges the answer, not the freeze: a correct answer is still correct', { timeout: 60_000 }, async () => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', workerScript(tool)], { stdio: ['pipe', 'pipe', 'inherit'] });
    try {
      const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe('ready');
      child.stdin!.write('check\n');
      // Frozen once the sandbox is up and the answer is working, for longer than its 2 s limit.
      await new Promise((resolve) => setTimeout(resolve, 300));
      await pauseFor(child.pid!, 4_000);
      expect(JSON.parse((await lines.next()).value as string)).toMatchObject({ status: 'correct' });
    } finally {
      child.kill('SIGKILL');
    }
  });
});
