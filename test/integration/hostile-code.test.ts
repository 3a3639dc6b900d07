import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/datasets/index.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryRequests } from '../../src/client/submit.js';
import { FORGED_VERDICT, marker, nameProcess, processesLeft } from '../code/sandbox-fixtures.js';
import { SAMPLE, startTestStack, type TestStack } from './local-stack.js';

const CODE_SAMPLE = path.resolve(import.meta.dirname, '../../data/code-sample.jsonl');

/**
 * Issue 23's hostile answers, each the reference solution of a code row, so that the simulated policy (always
 * right: it answers with the reference) sends it through the real workflow, CPU worker and sandbox. Every one
 * names its processes, so that the test can look for any left alive.
 */
const HOSTILE: Record<string, string> = {
  'endless-output': 'import os\nwhile True:\n    os.write(1, b"x" * 65536)  # no newline, ever',
  'fork-bomb': 'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass',
  'sleep-past-deadline': 'import time\ntime.sleep(600)\nprint("ok")',
  'memory-hog': 'blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 24))',
  'memory-across-processes':
    'import os, time\nfor _ in range(4):\n    if os.fork() == 0:\n        block = b"x" * (100 << 20)\n        time.sleep(30)\n        os._exit(0)\nos.wait()\nprint("ok")',
  'memory-in-files':
    'import os\nfor place in ("/dev/shm", "/tmp", "/sandbox"):\n    try:\n        fd = os.open(place + "/parked", os.O_CREAT | os.O_WRONLY)\n        while True:\n            os.write(fd, b"x" * (1 << 20))\n    except OSError:\n        pass\nimport time\ntime.sleep(600)',
  'forged-verdict': FORGED_VERDICT,
  'detached-and-silent': `import ctypes, os, signal, time
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(sig, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)
        os.close(0)
        time.sleep(600)
    os._exit(0)
os.close(1)
os.close(2)
while True:
    pass`,
  'kill-everything':
    'import os, signal\nfor pid in (0, -1, 1):\n    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\nimport time\ntime.sleep(600)',
};

/** A normal code row whose reference imports numpy: the default interpreter has it after `npm run setup`. */
const NUMPY_ROW = {
  task: 'code',
  query_id: 'hostile-mix/numpy-sum',
  prompt: 'Read integers on one line and print their sum, using numpy.',
  solutions: ['import numpy as np\nprint(int(np.array(input().split(), dtype=np.int64).sum()))'],
  input_output: JSON.stringify({ inputs: ['1 2 3\n', '-5 5\n'], outputs: ['6\n', '0\n'], fn_name: '' }),
  timeout: 6,
  memory: 512,
};

let stack: TestStack;
let stopWorkers: () => Promise<void>;
let dataDir: string;
const names = Object.fromEntries(Object.keys(HOSTILE).map((key) => [key, marker()]));

beforeAll(async () => {
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'ratchet-hostile-'));
  const math = (await readFile(SAMPLE, 'utf8')).trim().split('\n').slice(0, 8);
  const code = (await readFile(CODE_SAMPLE, 'utf8')).trim().split('\n').slice(0, 8);
  const hostile = Object.entries(HOSTILE).map(([key, body]) =>
    JSON.stringify({
      task: 'code',
      query_id: `hostile/${key}`,
      prompt: `Print ok. (${key})`,
      solutions: [`${nameProcess(names[key]!)}${body}`],
      input_output: JSON.stringify({ inputs: ['', ''], outputs: ['ok\n', 'ok\n'], fn_name: '' }),
      timeout: 2,
      memory: 256,
    }),
  );
  const dataset = path.join(dataDir, 'hostile-mix.jsonl');
  await writeFile(dataset, [...math, ...code, JSON.stringify(NUMPY_ROW), ...hostile].join('\n') + '\n');
  // Always right: every normal row gets its right answer, every hostile row its hostile reference.
  stack = await startTestStack({ seed: 23, correctProbability: 1 }, dataset);
  stopWorkers = await stack.startWorkers();
});

afterAll(async () => {
  await stopWorkers?.();
  await stack?.stop();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

const isHostile = (problem: Problem): boolean => problem.qid.startsWith('hostile/');

describe('a CPU worker judging hostile code answers beside normal trajectories', () => {
  it(
    'completes every normal trajectory right and scores every hostile one non-correct, in bounded time, leaving nothing alive',
    { timeout: 240_000 },
    async () => {
      expect(stack.problems.filter(isHostile)).toHaveLength(Object.keys(HOSTILE).length);
      const started = performance.now();
      const results = await runRollouts(stack.client, trajectoryRequests('hostile-mix', stack.problems, 1, { turns: 1 }));
      // Nine hostile answers of two 2 s tests each, on as many sandboxes as cores, beside 17 normal trajectories.
      expect(performance.now() - started).toBeLessThan(120_000);

      const verdicts = Object.fromEntries(results.map((result) => [result.qid, { status: result.status, verdict: result.turns[0]?.verdict }]));
      for (const problem of stack.problems) {
        const { status, verdict } = verdicts[problem.qid]!;
        expect({ qid: problem.qid, status }).toEqual({ qid: problem.qid, status: 'completed' });
        if (isHostile(problem)) expect(['wrong', 'timeout', 'runtime_error'], problem.qid).toContain(verdict);
        // The numpy row needs the code-python virtualenv that `npm run setup` makes.
        else
          expect({ qid: problem.qid, verdict }, 'a normal answer judged wrong (numpy: run `npm run setup`)').toEqual({
            qid: problem.qid,
            verdict: 'correct',
          });
      }

      // No activity failed or was retried on any trajectory: a hostile answer is a verdict, never a crash.
      for (const result of results) {
        const history = await stack.client.workflow.getHandle(`hostile-mix/${result.qid}/0`).fetchHistory();
        const failed = (history.events ?? []).filter(
          (event) =>
            event.markerRecordedEventAttributes?.failure || event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes,
        );
        expect(failed, result.qid).toEqual([]);
      }

      // The worker is still there for the next trajectories.
      const after = await runRollouts(
        stack.client,
        trajectoryRequests('after-hostile', stack.problems.filter((problem) => !isHostile(problem)).slice(0, 2), 1, { turns: 1 }),
      );
      expect(after.map((result) => [result.status, result.turns[0]?.verdict])).toEqual([
        ['completed', 'correct'],
        ['completed', 'correct'],
      ]);

      // Nothing of any answer is alive 5 s after the run.
      const until = performance.now() + 5_000;
      for (const [key, name] of Object.entries(names)) expect(await processesLeft(name, until - performance.now()), key).toEqual([]);
    },
  );
});
