import { describe, expect, it } from 'vitest';
import { BoundedOutput } from '../../src/code/bounded-output.js';
import { judgeRun } from '../../src/code/judge-run.js';
import { CodeSandboxPool, matchOutput, matchReturn, verifyCodeAnswer, type CodeTask } from '../../src/code/index.js';
import { seededRandom as random } from '../../src/policy/simulated/policy-config.js';
import { fenced, SANDBOXES } from './sandbox-fixtures.js';

const PIECES = [
  '{"test": 0, "status": "ran", "stdout": "ok\\n"}\n',
  '{"ready": true}\n',
  'ok\n',
  '\u0000',
  '\r\n',
  '\ud800',
  'NaN',
  'Infinity',
  '[1, 2',
  '"',
  '\\',
  ' ',
  '1e309',
  '-0',
  '9007199254740993',
];

/** A hostile byte stream: protocol-looking lines, invalid UTF-8, NULs, unterminated JSON, long runs without a newline. */
function stream(next: () => number, size: number): Buffer {
  const parts: Buffer[] = [];
  let length = 0;
  while (length < size) {
    const pick = next();
    const part =
      pick < 0.5
        ? Buffer.from(PIECES[Math.floor(next() * PIECES.length)]!, 'utf8')
        : pick < 0.8
          ? Buffer.from(Array.from({ length: 1 + Math.floor(next() * 64) }, () => Math.floor(next() * 256)))
          : Buffer.alloc(1 + Math.floor(next() * 4096), 'x');
    parts.push(part);
    length += part.length;
  }
  return Buffer.concat(parts);
}

describe('the channel from a solution, fuzzed without a sandbox', () => {
  it('keeps at most its limit of any stream, and says when it dropped the rest', () => {
    const next = random(1);
    for (let round = 0; round < 200; round++) {
      const limit = Math.floor(next() * 10_000);
      const output = new BoundedOutput(limit);
      let sent = 0;
      for (let i = 0; i < 20; i++) {
        const chunk = stream(next, Math.floor(next() * 2000));
        sent += chunk.length;
        output.push(chunk);
      }
      expect(output.overflowed).toBe(sent > limit);
      expect(output.bytes().length).toBe(sent > limit ? 0 : sent);
    }
  });

  it('judges any bytes, exit status and signal as a verdict, never an exception', () => {
    const next = random(2);
    const signals = [null, 'SIGKILL', 'SIGXCPU', 'SIGSEGV', 'SIGTERM'] as const;
    for (let round = 0; round < 2000; round++) {
      const stdout = stream(next, Math.floor(next() * 300));
      const expected = stream(next, Math.floor(next() * 60)).toString('utf8');
      const run = {
        kind: 'exited' as const,
        code: next() < 0.7 ? 0 : Math.floor(next() * 256),
        signal: signals[Math.floor(next() * signals.length)]!,
        cpuSeconds: next() * 4,
        cpuLimit: next() < 0.2,
        stdout,
        stderr: '',
        elapsedMs: 1,
      };
      const outcome = judgeRun(run, expected, next() < 0.5);
      expect(['passed', 'wrong', 'timeout', 'runtime_error']).toContain(outcome.status);
      expect(() => matchOutput(stdout.toString('latin1'), expected)).not.toThrow();
      expect(() => matchReturn(stdout.toString('utf8'), expected)).not.toThrow();
    }
  });
});

describe.each(SANDBOXES)('$name fuzzed through a real solution', ({ tool }) => {
  const sandbox = new CodeSandboxPool({ concurrency: 2, ...(tool ? { tool } : {}) });

  it('turns every hostile stream on stdout and stderr into a verdict', async () => {
    const next = random(tool === 'unshare' ? 4 : 3);
    const checks = Array.from({ length: 12 }, (_, round) => {
      const payload = stream(next, round % 4 === 3 ? 3_000_000 : Math.floor(next() * 20_000)).toString('base64');
      const closeStdout = next() < 0.3 ? 'os.close(1)\n' : '';
      const status = next() < 0.5 ? 0 : Math.floor(next() * 256);
      const callMode = next() < 0.4;
      const body = `import base64, os, sys\ndata = base64.b64decode("${payload}")\nos.write(2, data[:5000])\nview = memoryview(data)\nwhile view:\n    view = view[os.write(1, view):]\n${closeStdout}os._exit(${status})`;
      const code = callMode
        ? `def solve(*args):\n${body
            .split('\n')
            .map((line) => `    ${line}`)
            .join('\n')}`
        : body;
      const checked: CodeTask = { tests: { inputs: callMode ? ['1'] : [''], outputs: ['ok'], fnName: callMode ? 'solve' : '' }, timeoutS: 5 };
      return verifyCodeAnswer(checked, fenced(code), { sandbox });
    });
    const verdicts = await Promise.all(checks);
    // An exit status of 128 + SIGXCPU or SIGKILL reads as the CPU limit: a timeout, still no pass.
    for (const verdict of verdicts) expect(['wrong', 'runtime_error', 'timeout']).toContain(verdict.status);
  });
});
