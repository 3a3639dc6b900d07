import { z } from 'zod';
import { problemLines, readableIssue } from '../trajectory/schema-problems.js';

/**
 * What an agent program returns (the JSON it writes to `RATCHET_RESULT` before exiting 0): an `answer`, judged by
 * Ratchet's math verifier against the task's gold (the program never sees the gold), or a `reward` it computed itself,
 * with `success` when "succeeded" is not simply "reward > 0". Exactly one of `answer` and `reward`.
 */
export interface AgentProgramResult {
  answer?: string;
  reward?: number;
  success?: boolean;
}

/** The most a result may hold (a file, or a workflow's return value as JSON): a bigger one is not read. */
export const RESULT_LIMIT_BYTES = 1024 * 1024;

/** The most an answer may hold: 64 KiB of text is far past any final answer; more is a runaway program. */
export const RESULT_ANSWER_LIMIT = 65_536;

const resultShape = z.strictObject({
  answer: z.string().max(RESULT_ANSWER_LIMIT).optional(),
  reward: z.number().finite().optional(),
  success: z.boolean().optional(),
});

/** The program's result file checked: the result, or why it is not one (for the trajectory's `AgentResultInvalid`). */
export function checkProgramResult(text: string): { result: AgentProgramResult } | { invalid: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return { invalid: `the result is not JSON (${(error as Error).message})` };
  }
  const checked = resultShape.safeParse(parsed, { error: readableIssue });
  if (!checked.success)
    return { invalid: `the result is not {"answer": string} or {"reward": number}: ${problemLines(checked.error.issues, 'result').join('; ')}` };
  const { answer, reward, success } = checked.data;
  if ((answer === undefined) === (reward === undefined)) return { invalid: 'the result must hold exactly one of "answer" and "reward"' };
  if (answer !== undefined && success !== undefined) return { invalid: '"success" goes with "reward": an answer is judged by the verifier' };
  return {
    result: {
      ...(answer === undefined ? {} : { answer }),
      ...(reward === undefined ? {} : { reward }),
      ...(success === undefined ? {} : { success }),
    },
  };
}
