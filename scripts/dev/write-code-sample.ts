// Writes data/code-sample.jsonl (40 code problems in AReaL's `task: "code"` shape, with reference solutions)
// and data/mixed-sample.jsonl (math and code rows interleaved). The expected outputs are what each reference
// solution prints or returns, run in the same sandbox that judges answers. Run: npx vite-node scripts/dev/write-code-sample.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { CodeSandboxPool } from '../../src/code/index.js';
import { LEETCODE_PROBLEMS } from './code-sample/leetcode-problems.js';
import type { SampleCodeProblem } from './code-sample/sample-problem.js';
import { STDIN_PROBLEMS } from './code-sample/stdin-problems.js';

const dataFile = (name: string): string => fileURLToPath(new URL(`../../data/${name}`, import.meta.url));

async function expectedOutputs(sandbox: CodeSandboxPool, problem: SampleCodeProblem): Promise<string[]> {
  const answer = { code: problem.solution, fnName: problem.fnName ?? '', timeoutS: 10, memoryMb: 512 };
  const outputs: string[] = [];
  for (const [i, input] of problem.inputs.entries()) {
    const run = await sandbox.runTest(answer, input, 10_000);
    if (run.kind !== 'exited' || run.code !== 0) throw new Error(`${problem.id}: reference failed on test ${i + 1}: ${run.kind} ${run.stderr}`);
    outputs.push(run.stdout.toString('utf8'));
  }
  return outputs;
}

// A LeetCode-style prompt shows the signature to complete: the first two lines of the reference.
function withStarter(problem: SampleCodeProblem): string {
  if (!problem.fnName) return problem.prompt;
  const starter = problem.solution.split('\n').slice(0, 2).join('\n');
  return `${problem.prompt}\n\nStarter code:\n\`\`\`python\n${starter}\n\`\`\``;
}

async function main(): Promise<void> {
  const sandbox = new CodeSandboxPool({ concurrency: 2 });
  const rows: Array<Record<string, unknown>> = [];
  for (const problem of [...STDIN_PROBLEMS, ...LEETCODE_PROBLEMS]) {
    const outputs = await expectedOutputs(sandbox, problem);
    rows.push({
      task: 'code',
      query_id: `code-sample/${problem.id}`,
      prompt: withStarter(problem),
      solutions: [problem.solution],
      input_output: JSON.stringify({ inputs: problem.inputs, outputs, fn_name: problem.fnName ?? '' }),
      timeout: 6,
      memory: 256,
    });
  }
  const jsonl = (lines: unknown[]): string => `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
  writeFileSync(dataFile('code-sample.jsonl'), jsonl(rows));
  // Ten math rows of the math sample, each followed by a code row (stdin and LeetCode alike).
  const math = readFileSync(dataFile('sample.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .slice(0, 10);
  const code = [...rows.slice(0, 6), ...rows.slice(STDIN_PROBLEMS.length, STDIN_PROBLEMS.length + 4)];
  writeFileSync(dataFile('mixed-sample.jsonl'), `${math.flatMap((line, i) => [line, JSON.stringify(code[i])]).join('\n')}\n`);
  console.log(`wrote ${rows.length} code rows (${STDIN_PROBLEMS.length} stdin, ${LEETCODE_PROBLEMS.length} LeetCode) and 20 mixed rows`);
}

await main();
