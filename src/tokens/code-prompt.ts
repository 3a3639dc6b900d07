import type { ModelTokenizer } from './model-tokenizer.js';

/** Appended to a code problem, as the math instruction is to a math problem. */
export const CODE_INSTRUCTION = 'Write a complete Python 3 solution and put it in one ```python code block at the end of your answer.';

/** The first user message of a code trajectory. The simulated policy recognises code problems by this exact text. */
export function codeUserMessage(problem: string): string {
  return `${problem.trim()}\n${CODE_INSTRUCTION}`;
}

// AReaL's code prompts come already rendered with the (ChatML) template; rendering them again would nest it.
const RENDERED = /^\s*<\|im_start\|>/;

/**
 * Prompt ids of a code problem: an AReaL prompt that is already chat-templated is tokenized as it is;
 * plain problem text is rendered with the model's chat template, with the code instruction.
 */
export function codePromptIds(tokenizer: ModelTokenizer, problem: string): number[] {
  if (RENDERED.test(problem)) return tokenizer.encode(problem);
  return tokenizer.encode(tokenizer.renderChat([{ role: 'user', content: codeUserMessage(problem) }], true));
}

/** Whether a problem text is an already rendered prompt. */
export function isRenderedPrompt(problem: string): boolean {
  return RENDERED.test(problem);
}
