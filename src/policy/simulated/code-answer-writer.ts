import type { Problem } from '../../datasets/index.js';

/**
 * Writes a code answer: the row's reference solution when it should be right; otherwise one that fails
 * every test for certain, half the time by printing (or returning) a wrong value, half by crashing. Without
 * a reference solution it can only be wrong.
 */
export function writeCodeAnswer(problem: Problem, correct: boolean, random: () => number): string {
  const reference = problem.gold.find((solution) => solution.trim().length >= 20);
  const fnName = problem.code?.tests.fnName ?? '';
  const code = reference === undefined ? STUB : correct ? reference.trim() : broken(reference.trim(), fnName, random() < 0.5);
  return `Let me think about the algorithm first, then write the program.\n\n\`\`\`python\n${code}\n\`\`\``;
}

const STUB = 'import sys\nprint("I could not solve this problem.")  # always wrong';

function broken(reference: string, fnName: string, crash: boolean): string {
  if (crash) return `${reference}\nraise RuntimeError("simulated bug")`;
  // An extra output line defeats every comparison rule, as does a return value no test expects.
  if (fnName === '') return `${reference}\nprint("simulated off-by-one")`;
  const wrong = 'lambda *args, **kwargs: "simulated wrong value"';
  return `${reference}\n${fnName} = ${wrong}\nif "Solution" in globals():\n    Solution.${fnName} = ${wrong}`;
}
