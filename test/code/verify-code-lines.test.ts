import { PassThrough, Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { runVerifyCommand } from '../../src/cli/verify-command.js';
import { ensureWorkerBuilt } from '../verifier/built-worker.js';

async function verify(lines: string[]): Promise<Array<Record<string, unknown>>> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  await runVerifyCommand(Readable.from([lines.join('\n')]), output, { budgetMs: 3000 });
  return Buffer.concat(chunks).toString('utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
}

const inputOutput = JSON.stringify({ inputs: ['2\n', '5\n'], outputs: ['4\n', '25\n'], fn_name: '' });
const code = (body: string): string => `\`\`\`python\n${body}\n\`\`\``;

describe('ratchet verify on code lines', () => {
  beforeAll(() => ensureWorkerBuilt());

  it('answers code and math lines in input order', async () => {
    const out = await verify([
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('n = int(input())\nprint(n * n)'), timeout: 5 }),
      JSON.stringify({ gold: '2', pred: '\\boxed{2}' }),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('n = int(input())\nprint(n + n)') }),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: 'I would square it.' }),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('while True:\n    pass  # never ends'), timeout: 1 }),
    ]);
    expect(out.map((verdict) => [verdict.line, verdict.status, verdict.equal])).toEqual([
      [1, 'correct', true], [2, 'correct', true], [3, 'wrong', false], [4, 'no_answer', false], [5, 'timeout', false],
    ]);
    expect(out[0]).toMatchObject({ passed: 2, total: 2 });
  });

  it('answers every hostile code line with a verdict, and carries on', async () => {
    const hostile = [
      'import ctypes, os, time\nlibc = ctypes.CDLL(None)\nfd = libc.syscall(438, libc.syscall(434, 1, 0), 1, 0)\nos.write(fd if fd >= 0 else 1, b\'{"test": 0, "status": "ran", "stdout": "4"}\\n\')\ntime.sleep(60)',
      'import os\nwhile True:\n    os.write(1, b"x" * 65536)  # no newline, ever',
      'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass',
      'import os, sys\nos.write(1, bytes(range(256)) * 64)\nsys.stdout.close()\nos.close(2)',
      'import os, signal\nfor pid in (0, -1):\n    os.kill(pid, signal.SIGKILL)\nprint(4)',
    ];
    const out = await verify([
      ...hostile.map((body) => JSON.stringify({ task: 'code', input_output: inputOutput, pred: code(body), timeout: 1 })),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('n = int(input())\nprint(n * n)') }),
    ]);
    expect(out.map((verdict) => verdict.line)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const verdict of out.slice(0, 5)) expect(['wrong', 'timeout', 'runtime_error']).toContain(verdict.status);
    expect(out[5]).toMatchObject({ status: 'correct' });
  });

  it('reports an invalid code line as an error with the reason', async () => {
    const out = await verify([JSON.stringify({ task: 'code', input_output: '{"inputs": ["1"], "outputs": []}', pred: 'x' })]);
    expect(out[0]).toMatchObject({ line: 1, status: 'error', equal: false, detail: 'invalid code line: "input_output" has 1 inputs but 0 outputs' });
  });
});
