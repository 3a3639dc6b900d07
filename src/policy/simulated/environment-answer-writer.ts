import { TOOL_INSTRUCTION } from '../../environments/math-python-tool.js';
import { writeAnswer } from './answer-writer.js';

/**
 * Answers for the prompts of environments other than math and code, recognised by their text: nothing is drawn
 * (and no answer written) for any other prompt, so the math and code answers keep their random streams.
 *
 * - `math-python-tool` (the problem, then the tool instruction): on the first turn, with probability
 *   `TOOL_CALL_PROBABILITY`, a ```python block that prints the answer (right or wrong); otherwise, and on every later
 *   turn, a worked answer in `\boxed{}` (judged, which ends the episode).
 * - guess-number (examples/environments/guess_number.py, "I am thinking of a whole number from L to H"): a guess in
 *   `\boxed{}` within what "Too low." / "Too high." left open, the midpoint half of the time, else anywhere in it.
 */
export function writeEnvironmentAnswer(
  decodedContext: string,
  toolGold: (decodedContext: string) => string[] | undefined,
  correct: boolean,
  sentences: number,
  random: () => number,
): string | undefined {
  const game = GUESS_PROMPT.exec(decodedContext);
  if (game) return writeGuess(decodedContext, Number(game[1]), Number(game[2]), random);
  if (!decodedContext.includes(TOOL_INSTRUCTION)) return undefined;
  const turn = Math.max(0, decodedContext.split(ASSISTANT).length - 2);
  const answer = writeAnswer(toolGold(decodedContext), correct, sentences, random);
  if (turn > 0 || random() >= TOOL_CALL_PROBABILITY) return answer;
  const boxed = /\\boxed\{(.*)\}\$\.$/.exec(answer)?.[1] ?? '0';
  return `Let me compute this with a program.\n\n\`\`\`python\nanswer = ${JSON.stringify(boxed)}\nprint(answer)\n\`\`\``;
}

export const TOOL_CALL_PROBABILITY = 0.6;
const ASSISTANT = '<|im_start|>assistant';
const GUESS_PROMPT = /I am thinking of a whole number from (-?\d+) to (-?\d+)\. Guess it/;

function writeGuess(decodedContext: string, low: number, high: number, random: () => number): string {
  // Each assistant turn after the prompt holds a guess, then the game's answer to it.
  for (const turn of decodedContext.split(ASSISTANT).slice(1)) {
    const guess = /\\boxed\{\s*(-?\d+)\s*\}/.exec(turn);
    if (!guess) continue;
    const n = Number(guess[1]);
    if (turn.includes('Too low.')) low = Math.max(low, n + 1);
    else if (turn.includes('Too high.')) high = Math.min(high, n - 1);
  }
  if (high < low) high = low;
  const guess = random() < 0.5 ? Math.floor((low + high) / 2) : low + Math.floor(random() * (high - low + 1));
  return `The number is between ${low} and ${high}. My guess is \\boxed{${guess}}.`;
}
