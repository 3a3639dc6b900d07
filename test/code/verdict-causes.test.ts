import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, verifyCodeAnswer } from '../../src/code/index.js';
import { judgeRun } from '../../src/code/judge-run.js';
import { fenced, marker, nameProcess, processesLeft, SANDBOXES, task } from './sandbox-fixtures.js';

describe.each(SANDBOXES)('$name labels each verdict by its real cause', ({ tool }) => {
  const sandbox = new CodeSandboxPool({ concurrency: 2, ...(tool ? { tool } : {}) });

  it('a solution that prints the answer, then SIGKILLs itself, is never correct', async () => {
    const verdict = await verifyCodeAnswer(
      task(['ok']),
      fenced('import os, signal, sys\nprint("ok")\nsys.stdout.flush()\nos.kill(os.getpid(), signal.SIGKILL)'),
      { sandbox },
    );
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('killed by SIGKILL') });
  });

  it('a solution that kills its own process group dies of it, and takes nothing else down', async () => {
    const name = marker();
    const verdict = await verifyCodeAnswer(
      task(['ok']),
      fenced(`${nameProcess(name)}import os, signal, sys\nprint("ok")\nsys.stdout.flush()\nos.kill(0, signal.SIGKILL)`),
      { sandbox },
    );
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('killed by SIGKILL') });
    expect(await processesLeft(name, 5_000)).toEqual([]);
    expect(await verifyCodeAnswer(task(['3']), fenced('print(sum(range(3)))  # still judging'), { sandbox })).toMatchObject({ status: 'correct' });
  });

  it('an exit status of 137 is a crash with that status, not a timeout', async () => {
    const verdict = await verifyCodeAnswer(task(['ok']), fenced('import sys\nprint("ok")\nsys.stdout.flush()\nsys.exit(137)'), { sandbox });
    expect(verdict).toMatchObject({ status: 'runtime_error', detail: expect.stringContaining('exit status 137') });
  });

  it('exit() and quit() work as site gives them: status 0 is correct, any other a crash', async () => {
    expect(await verifyCodeAnswer(task(['ok']), fenced('print("ok")\nexit()\nprint("never")'), { sandbox })).toMatchObject({ status: 'correct' });
    expect(await verifyCodeAnswer(task(['ok']), fenced('print("ok")\nquit(3)\nprint("never")'), { sandbox })).toMatchObject({
      status: 'runtime_error',
      detail: expect.stringContaining('exit status 3'),
    });
  });

  it('integers past 4,300 digits print, parse and come back from a call', async () => {
    const big = `1${'0'.repeat(5_000)}`;
    const printed = await verifyCodeAnswer(
      { tests: { inputs: [`${big}\n`], outputs: [`${big}1`], fnName: '' }, timeoutS: 5, memoryMb: 256 },
      fenced('n = int(input())\nprint(n * 10 + 1)  # a 5,001-digit integer'),
      { sandbox },
    );
    expect(printed).toMatchObject({ status: 'correct' });
    const returned = await verifyCodeAnswer(
      { tests: { inputs: ['5000'], outputs: [big], fnName: 'power' }, timeoutS: 5, memoryMb: 256 },
      fenced('def power(n):\n    return 10 ** n  # a 5,001-digit integer'),
      { sandbox },
    );
    expect(returned).toMatchObject({ status: 'correct' });
  });
});

describe('the CPU-time limit, as the launcher reports it', () => {
  const ended = { kind: 'exited' as const, code: null, stdout: Buffer.from('ok'), stderr: '', elapsedMs: 900 };

  it('is a timeout only when the limit fired', () => {
    expect(judgeRun({ ...ended, signal: 'SIGKILL', cpuSeconds: 4.01, cpuLimit: true }, 'ok', false)).toMatchObject({
      status: 'timeout',
      detail: expect.stringContaining('CPU time limit'),
    });
    expect(judgeRun({ ...ended, signal: 'SIGKILL', cpuSeconds: 0.2, cpuLimit: false }, 'ok', false)).toMatchObject({
      status: 'runtime_error',
      detail: 'killed by SIGKILL',
    });
    expect(judgeRun({ ...ended, signal: 'SIGXCPU', cpuSeconds: 0.2, cpuLimit: false }, 'ok', false)).toMatchObject({ status: 'runtime_error' });
    expect(judgeRun({ ...ended, code: 137, signal: null, cpuSeconds: 0.2, cpuLimit: false }, 'ok', false)).toMatchObject({
      status: 'runtime_error',
      detail: 'crashed: exit status 137',
    });
  });

  it('an end the sandbox did not report is a runtime error, never correct', () => {
    expect(judgeRun({ ...ended, signal: null, cpuSeconds: 0, cpuLimit: false }, 'ok', false)).toMatchObject({ status: 'runtime_error' });
  });
});
