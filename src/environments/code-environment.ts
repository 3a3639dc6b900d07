import { verifyCodeAnswer, type CodeSandboxPool } from '../code/index.js';
import { codeUserMessage, isRenderedPrompt } from '../tokens/code-prompt.js';
import { EnvironmentFailure, type Environment } from './environment.js';
import { judged } from './math-environment.js';

/**
 * The seed's code environment: the answer's last Python block runs against the task's tests in the sandbox; the
 * feedback and rewards are the math environment's. A sandbox that cannot run throws `SandboxFailure` (ours,
 * retried, never scored); a timeout or a crash is the answer's verdict.
 */
export function codeEnvironment(sandbox: CodeSandboxPool): Environment {
  return {
    name: 'code',
    slowSteps: true,
    reset: async (task) =>
      isRenderedPrompt(task.problem) ? { renderedPrompt: task.problem } : { messages: [{ role: 'user', content: codeUserMessage(task.problem) }] },
    step: async (task, action) => {
      if (!task.code)
        throw new EnvironmentFailure(`trajectory ${task.trajectoryId} uses the code environment but its request has no \`code\` tests`, 'data');
      const verdict = await verifyCodeAnswer(task.code, action.text, { sandbox });
      return judged(verdict.status, verdict.equal, verdict.predicted, verdict.detail);
    },
  };
}
