import { extractGoldAnswers } from '../../verifier/index.js';

/** Writes a plausible worked answer, right or wrong, ending in `\boxed{}` as the math instruction asks. */
export function writeAnswer(gold: readonly string[] | undefined, correct: boolean, reasoningSentences: number, random: () => number): string {
  const answer = gold ? goldAnswer(gold) : undefined;
  const boxed = answer === undefined ? String(Math.floor(random() * 1000)) : correct ? answer : wrongAnswer(answer, random);
  const steps = Array.from({ length: reasoningSentences }, (_, i) => REASONING[(i + Math.floor(random() * REASONING.length)) % REASONING.length]);
  return `Let me solve this step by step.\n${steps.join(' ')}\nTherefore, the final answer is $\\boxed{${boxed}}$.`;
}

function goldAnswer(gold: readonly string[]): string | undefined {
  return extractGoldAnswers([...gold])[0];
}

function wrongAnswer(answer: string, random: () => number): string {
  const number = Number(answer.replace(/,/g, ''));
  const offset = 1 + Math.floor(random() * 9);
  if (Number.isFinite(number) && answer.trim() !== '') return String(number + offset);
  return `${answer}+${offset}`;
}

const REASONING = [
  'First, I restate what the problem gives and what it asks for.',
  'I write the relationship between the quantities as an equation.',
  'Substituting the known values simplifies the expression.',
  'I check each step carefully to avoid arithmetic mistakes.',
  'Combining like terms gives a simpler form.',
  'This matches the constraint stated in the problem.',
  'Now I compute the remaining value.',
  'Let me double-check the computation once more.',
];
