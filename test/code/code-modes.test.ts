import { describe, expect, it } from 'vitest';
import { CodeSandboxPool, SandboxFailure, verifyCodeAnswer, type CodeTask } from '../../src/code/index.js';

const sandbox = new CodeSandboxPool({ concurrency: 2 });
const fenced = (code: string): string => `Here is my solution.\n\`\`\`python\n${code}\n\`\`\``;

const sum: CodeTask = { tests: { inputs: ['1 2\n', '3 4\n', '10 -20\n'], outputs: ['3\n', '7\n', '-10\n'], fnName: '' }, timeoutS: 5 };
const twoSum: CodeTask = {
  tests: { inputs: ['[2,7,11,15]\n9', '[3,2,4]\n6', '[3,3]\n6'], outputs: ['[0,1]', '[1,2]', '[0,1]'], fnName: 'twoSum' },
  timeoutS: 5,
};
const TWO_SUM = `class Solution:
    def twoSum(self, nums: List[int], target: int) -> List[int]:
        seen = {}
        for i, x in enumerate(nums):
            if target - x in seen:
                return [seen[target - x], i]
            seen[x] = i`;

describe('stdin/stdout mode', () => {
  it('scores a correct program correct, every test passed', async () => {
    const verdict = await verifyCodeAnswer(sum, fenced('a, b = map(int, input().split())\nprint(a + b)'), { sandbox });
    expect(verdict).toMatchObject({ equal: true, status: 'correct', passed: 3, total: 3 });
  });

  it('scores a program wrong at its first failing test', async () => {
    const verdict = await verifyCodeAnswer(sum, fenced('a, b = map(int, input().split())\nprint(abs(a + b))'), { sandbox });
    expect(verdict).toMatchObject({ equal: false, status: 'wrong', passed: 2 });
    expect(verdict.detail).toContain('test 3 of 3');
  });

  it('scores an exception as a runtime error, with its traceback', async () => {
    const verdict = await verifyCodeAnswer(sum, fenced('a, b = map(int, input().split())\nprint(a // 0)'), { sandbox });
    expect(verdict.status).toBe('runtime_error');
    expect(verdict.detail).toContain('ZeroDivisionError');
  });

  it('gives an answer without a code block no_answer, without running anything', async () => {
    const verdict = await verifyCodeAnswer(sum, 'print the sum', { sandbox });
    expect(verdict).toMatchObject({ status: 'no_answer', predicted: null, passed: 0 });
  });

  it('treats sys.exit(0) as a normal end and reads all of stdin', async () => {
    const verdict = await verifyCodeAnswer(sum, fenced('import sys\nprint(sum(map(int, sys.stdin.read().split())))\nsys.exit(0)'), { sandbox });
    expect(verdict.status).toBe('correct');
  });
});

describe('LeetCode (fn_name) mode', () => {
  it('calls the Solution method with the JSON arguments and compares the return value', async () => {
    const verdict = await verifyCodeAnswer(twoSum, fenced(TWO_SUM), { sandbox });
    expect(verdict).toMatchObject({ status: 'correct', passed: 3 });
  });

  it('calls a plain function of that name, and ignores what it prints', async () => {
    const code =
      'def twoSum(nums, target):\n    print("debugging")\n    for j in range(len(nums)):\n        for i in range(j):\n            if nums[i] + nums[j] == target:\n                return (i, j)';
    const verdict = await verifyCodeAnswer(twoSum, fenced(code), { sandbox });
    expect(verdict.status).toBe('correct');
  });

  it('scores a wrong return value wrong', async () => {
    const verdict = await verifyCodeAnswer(twoSum, fenced('class Solution:\n    def twoSum(self, nums, target):\n        return [1, 0]'), {
      sandbox,
    });
    expect(verdict).toMatchObject({ status: 'wrong', passed: 0 });
  });

  it('scores a missing method as a runtime error', async () => {
    const verdict = await verifyCodeAnswer(twoSum, fenced('class Solution:\n    def threeSum(self, nums):\n        return []'), { sandbox });
    expect(verdict.status).toBe('runtime_error');
    expect(verdict.detail).toContain('no class Solution with method twoSum');
  });
});

describe('concurrency', () => {
  it('runs many answers through two sandboxes, each judged on its own', async () => {
    const answers = Array.from({ length: 8 }, (_, i) => fenced(`a, b = map(int, input().split())\nprint(a + b${i % 2 === 0 ? '' : ' + 1'})`));
    const verdicts = await Promise.all(answers.map((answer) => verifyCodeAnswer(sum, answer, { sandbox })));
    expect(verdicts.map((v) => v.status)).toEqual(answers.map((_, i) => (i % 2 === 0 ? 'correct' : 'wrong')));
  });
});

describe('a sandbox that cannot run', () => {
  it('throws SandboxFailure, never a verdict', async () => {
    const broken = new CodeSandboxPool({ concurrency: 1, python: '/nonexistent/python3' });
    const check = verifyCodeAnswer(sum, fenced('a, b = map(int, input().split())\nprint(a + b)'), { sandbox: broken });
    await expect(check).rejects.toBeInstanceOf(SandboxFailure);
    await expect(check).rejects.toThrow(/no isolation tool works on this machine \(bwrap: .*; unshare: .*\)/);
  });
});
