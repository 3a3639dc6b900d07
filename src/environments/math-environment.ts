import type { VerifierPool } from '../verifier/index.js';
import { feedbackText, mathUserMessage } from '../tokens/math-prompt.js';
import type { Environment, StepResult } from './environment.js';
import { judgeMathAnswer } from './math-judge.js';

/**
 * The seed's environment: a math problem with the usual instruction; each answer is checked by the verifier and
 * answered with one of two feedback sentences as a user turn. Reward +1 correct, −1 otherwise; never done by
 * itself (the run's `turns` and `earlyStop` end the episode). The same tokens and rewards as releases 1–4.
 */
export function mathEnvironment(verifier: VerifierPool): Environment {
  return {
    name: 'math',
    reset: async (task) => ({ messages: [{ role: 'user', content: mathUserMessage(task.problem) }] }),
    step: async (task, action) => {
      const answer = { trajectoryId: task.trajectoryId, turn: action.turn, gold: task.gold, text: action.text, attempt: action.attempt };
      const verdict = await judgeMathAnswer(verifier, answer, task.answerExtraction ? { extraction: task.answerExtraction } : {});
      return judged(verdict.status, verdict.equal, verdict.predicted, verdict.detail);
    },
  };
}

/** A judged answer as the seed answers it: ±1 and the feedback sentence, the episode going on. */
export function judged(verdict: string, success: boolean, predicted: string | null, detail: string | undefined): StepResult {
  return {
    observations: [{ role: 'user', content: feedbackText(success) }],
    reward: success ? 1 : -1,
    success,
    done: false,
    verdict,
    predicted,
    ...(detail === undefined ? {} : { detail }),
  };
}
