/** The usual math instruction (Qwen2.5-Math / DeepSeek-R1 style) appended to every problem. */
export const MATH_INSTRUCTION = 'Please reason step by step, and put your final answer within \\boxed{}.';

/** The first user message of a trajectory. The simulated policy recognises problems by this exact text. */
export function mathUserMessage(problem: string): string {
  return `${problem.trim()}\n${MATH_INSTRUCTION}`;
}

export const FEEDBACK_CORRECT = 'Congratulations! You are correct!';
export const FEEDBACK_WRONG = "Unfortunately your answer is wrong. Let's try again.";

export function feedbackText(success: boolean): string {
  return success ? FEEDBACK_CORRECT : FEEDBACK_WRONG;
}
