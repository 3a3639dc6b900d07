import type { VerifierPool } from '../verifier/index.js';
import { feedbackText, mathUserMessage } from '../tokens/math-prompt.js';
import { EnvironmentFailure, type Environment, type StepResult } from './environment.js';

/** Attempts that report a verifier timeout as the machine's fault before the timeout becomes the verdict. */
const TIMEOUT_RETRIES = 1;

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
      const verdict = await verifier.verify([...task.gold], action.text, task.answerExtraction ? { extraction: task.answerExtraction } : {});
      // A timeout is retried once (the machine may have been busy), then recorded as the verdict `timeout`.
      if (verdict.status === 'timeout' && action.attempt <= TIMEOUT_RETRIES) {
        throw new EnvironmentFailure(`verifying ${task.trajectoryId} turn ${action.turn} ran past its budget`, 'infrastructure', { failureType: 'VerifierTimeout' });
      }
      // A verifier exception is our bug, not the model's: it fails the trajectory instead of scoring it.
      if (verdict.status === 'error') {
        throw new EnvironmentFailure(`verifier failed on ${task.trajectoryId} turn ${action.turn}: ${verdict.detail ?? 'unknown error'}`, 'data', { failureType: 'VerifierError' });
      }
      return judged(verdict.status, verdict.equal, verdict.predicted, verdict.detail);
    },
  };
}

/** A judged answer as the seed answers it: ±1 and the feedback sentence, the episode going on. */
export function judged(verdict: string, success: boolean, predicted: string | null, detail: string | undefined): StepResult {
  return {
    observations: [{ role: 'user', content: feedbackText(success) }], reward: success ? 1 : -1, success, done: false, verdict, predicted,
    ...(detail === undefined ? {} : { detail }),
  };
}
