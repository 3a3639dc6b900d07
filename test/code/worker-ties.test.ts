import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { descendantsOf } from '../../scripts/support/paused-process.js';
import { pollUntil } from '../../src/timing/poll-until.js';
import { fenced, marker, nameProcess, processesLeft, processesNamed, SANDBOXES, task } from './sandbox-fixtures.js';

// A worker in a process of its own (the built pool, as stalled-worker.test.ts runs it), started with an extra pipe
// at fd 9 that it inherits without close-on-exec, as a worker inherits descriptors from whatever started it.
// It prints the verdict of `answer` (one test, `timeoutS`) as JSON.
const workerScript = (tool: string | undefined, answer: string, timeoutS: number) => `
  import { CodeSandboxPool, verifyCodeAnswer } from ${JSON.stringify(new URL('../../dist/code/index.js', import.meta.url).href)};
  const sandbox = new CodeSandboxPool({ concurrency: 1${tool ? `, tool: ${JSON.stringify(tool)}` : ''} });
  const task = { tests: { inputs: [''], outputs: ['[0, 1, 2]'], fnName: '' }, timeoutS: ${timeoutS}, memoryMb: 256 };
  console.log(JSON.stringify(await verifyCodeAnswer(task, ${JSON.stringify(answer)}, { sandbox })));
`;
const startWorker = (tool: string | undefined, answer: string, timeoutS: number) =>
  spawn(process.execPath, ['--input-type=module', '-e', workerScript(tool, answer, timeoutS)], {
    stdio: ['ignore', 'pipe', 'inherit', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'ignore', 'pipe'],
  });

/** Whether a process runs (a zombie waiting for a parent that never reaps it holds nothing and runs nothing). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

const LIST_FDS = fenced(
  'import os\nheld = []\nfor fd in range(4096):\n    try:\n        os.fstat(fd)\n        held.append(fd)\n    except OSError:\n        pass\nprint(held)',
);

describe.each(SANDBOXES)('$name holds only what the judge gives it', ({ tool }) => {
  it('a solution sees descriptors 0, 1 and 2 and no other, whatever its worker inherited', { timeout: 30_000 }, async () => {
    const worker = startWorker(tool, LIST_FDS, 5);
    const line = await createInterface({ input: worker.stdout! })[Symbol.asyncIterator]().next();
    expect(JSON.parse(line.value as string)).toMatchObject({ status: 'correct' });
  });

  it('stdin and stdout open as files, as a process started from a shell has them', async () => {
    const sandbox = new CodeSandboxPool({ concurrency: 1, ...(tool ? { tool } : {}) });
    const answer = fenced(
      'with open("/dev/stdin") as source:\n    a, b = map(int, source.read().split())\nwith open("/dev/stdout", "w") as sink:\n    sink.write(f"{a + b}\\n")',
    );
    const verdict = await verifyCodeAnswer({ tests: { inputs: ['2 3\n'], outputs: ['5'], fnName: '' }, timeoutS: 5, memoryMb: 256 }, answer, {
      sandbox,
    });
    expect(verdict).toMatchObject({ status: 'correct' });
  });
});

describe.each(SANDBOXES)('$name lives no longer than its worker', ({ tool }) => {
  it('a worker killed by SIGKILL takes every process of its sandbox with it within 3 s', { timeout: 60_000 }, async () => {
    const name = marker();
    const worker = startWorker(tool, fenced(`${nameProcess(name)}import os, time\nos.fork()\ntime.sleep(60)`), 30);
    try {
      await pollUntil(() => processesNamed(name), {
        what: `the answer's processes named ${name}`,
        timeoutMs: 20_000,
        done: (found) => found.length === 2,
      });
      const sandboxProcesses = await descendantsOf(worker.pid!);
      expect(sandboxProcesses.length).toBeGreaterThanOrEqual(3);
      worker.kill('SIGKILL');
      expect(await processesLeft(name, 3_000)).toEqual([]);
      const left = await pollUntil(() => sandboxProcesses.filter(alive), {
        what: 'no process of the sandbox',
        timeoutMs: 3_000,
        done: (alive) => alive.length === 0,
      }).catch((error: Error) => error.message);
      expect(left).toEqual([]);
    } finally {
      worker.kill('SIGKILL');
    }
  });
});
