import { spawn } from 'node:child_process';
import { PassThrough, Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { runVerifyCommand } from '../../src/cli/verify-command.js';
import { CLI } from '../cli/run-cli.js';
import { ensureWorkerBuilt } from '../verifier/built-worker.js';
import { SANDBOXES } from './sandbox-fixtures.js';

async function verify(lines: string[]): Promise<Array<Record<string, unknown>>> {
  const output = new PassThrough();
  const chunks: Buffer[] = [];
  output.on('data', (chunk: Buffer) => chunks.push(chunk));
  await runVerifyCommand(Readable.from([lines.join('\n')]), output, { budgetMs: 3000 });
  return Buffer.concat(chunks)
    .toString('utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const inputOutput = JSON.stringify({ inputs: ['2\n', '5\n'], outputs: ['4\n', '25\n'], fn_name: '' });
const code = (body: string): string => `\`\`\`python\n${body}\n\`\`\``;

/** One answer of each hostile class (test/code/hostile-answers.test.ts holds them all, under both sandboxes). */
const HOSTILE = [
  // A forged protocol line on a stolen descriptor, then silence.
  'import ctypes, os, time\nlibc = ctypes.CDLL(None)\nfd = libc.syscall(438, libc.syscall(434, 1, 0), 1, 0)\nos.write(fd if fd >= 0 else 1, b\'{"test": 0, "status": "ran", "stdout": "4"}\\n\')\ntime.sleep(60)',
  'import os\nwhile True:\n    os.write(1, b"x" * 65536)  # no newline, ever',
  'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass',
  'import os, sys\nos.write(1, bytes(range(256)) * 64)\nsys.stdout.close()\nos.close(2)',
  'import os, signal\nfor pid in (0, -1):\n    os.kill(pid, signal.SIGKILL)\nprint(4)',
  'import time\ntime.sleep(600)',
  'blocks = []\nwhile True:\n    blocks.append(bytearray(1 << 24))',
  'import os, time\nfor _ in range(4):\n    if os.fork() == 0:\n        block = b"x" * (200 << 20)\n        time.sleep(30)\nos.wait()',
  'import os\nfd = os.open("/dev/shm/parked", os.O_CREAT | os.O_WRONLY)\nwhile True:\n    os.write(fd, b"x" * (1 << 20))',
  'import os, signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nif os.fork() == 0:\n    os.setsid()\n    os.close(0)\n    time.sleep(600)\nos.close(1)\nos.close(2)\nwhile True:\n    pass',
  'import sys\nsys.stderr.write("e" * (64 << 20))\nsys.exit(0)',
];

/** `ratchet verify` as a process, the lines on its stdin. */
function runVerifyProcess(lines: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'verify'], { env: { ...process.env, LOG_LEVEL: undefined, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdin.end(lines.join('\n'));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

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
      [1, 'correct', true],
      [2, 'correct', true],
      [3, 'wrong', false],
      [4, 'no_answer', false],
      [5, 'timeout', false],
    ]);
    expect(out[0]).toMatchObject({ passed: 2, total: 2 });
  });

  it('answers every hostile code line with a verdict, and carries on', async () => {
    const out = await verify([
      ...HOSTILE.map((body) => JSON.stringify({ task: 'code', input_output: inputOutput, pred: code(body), timeout: 1 })),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('n = int(input())\nprint(n * n)') }),
    ]);
    expect(out.map((verdict) => verdict.line)).toEqual([...HOSTILE.keys(), HOSTILE.length].map((index) => index + 1));
    for (const verdict of out.slice(0, HOSTILE.length)) expect(['wrong', 'timeout', 'runtime_error']).toContain(verdict.status);
    expect(out[HOSTILE.length]).toMatchObject({ status: 'correct' });
  });

  it.each(SANDBOXES)('exits 0 as a process under $name, with a verdict for every hostile line', { timeout: 120_000 }, async ({ tool }) => {
    const lines = [
      ...HOSTILE.map((body) => JSON.stringify({ task: 'code', input_output: inputOutput, pred: code(body), timeout: 1 })),
      JSON.stringify({ task: 'code', input_output: inputOutput, pred: code('import numpy as np\nprint(int(np.square(np.int64(input()))))') }),
    ];
    const { code: exit, stdout, stderr } = await runVerifyProcess(lines, tool ? { RATCHET_CODE_SANDBOX: tool } : {});
    expect(exit, stderr).toBe(0);
    const out = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(out.map((verdict) => verdict.line)).toEqual(lines.map((_, index) => index + 1));
    for (const verdict of out.slice(0, HOSTILE.length)) expect(['wrong', 'timeout', 'runtime_error']).toContain(verdict.status);
    // The default interpreter is the code-python virtualenv `npm run setup` makes: numpy imports.
    expect(out[HOSTILE.length], 'no numpy: run `npm run setup` first').toMatchObject({ status: 'correct' });
  });

  it('reports an invalid code line as an error with the reason', async () => {
    const out = await verify([JSON.stringify({ task: 'code', input_output: '{"inputs": ["1"], "outputs": []}', pred: 'x' })]);
    expect(out[0]).toMatchObject({ line: 1, status: 'error', equal: false, detail: 'invalid code line: "input_output" has 1 inputs but 0 outputs' });
  });
});
