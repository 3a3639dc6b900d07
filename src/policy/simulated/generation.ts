import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import { MATH_INSTRUCTION, mathUserMessage } from '../../tokens/math-prompt.js';
import { CODE_INSTRUCTION, codeUserMessage, isRenderedPrompt } from '../../tokens/code-prompt.js';
import type { Problem } from '../../datasets/index.js';
import { writeAnswer } from './answer-writer.js';
import { writeCodeAnswer } from './code-answer-writer.js';
import { writeEnvironmentAnswer } from './environment-answer-writer.js';
import { writeToolCallAnswer } from './tool-call-writer.js';
import { TOOL_INSTRUCTION } from '../../environments/math-python-tool.js';
import { correctProbabilityAt, type SimulatedPolicyConfig } from './policy-config.js';
import { returnedLogprobs, type TopCandidates } from './returned-logprobs.js';
import type { SamplingParameters } from '../../trajectory/sampling.js';

export interface SimulatedGeneration {
  outputIds: number[];
  /** Of the request's sampling distribution, or of the model's own on a `raw` server. */
  logprobs: number[];
  /** Per output token, its most probable candidates, when the request asked for `top_logprobs_num`. */
  topLogprobs?: TopCandidates[];
  finishReason: { type: 'stop'; matched: number } | { type: 'length'; length: number };
  turn: number;
  correct: boolean;
}

/** Knows the gold answers of the dataset it was given, so it can be right on purpose. */
export class AnswerBook {
  private readonly byMessage = new Map<string, string[]>();
  /** Math problems by their text alone, as an agent program asks them. */
  private readonly byProblem = new Map<string, string[]>();
  private readonly codeByMessage = new Map<string, Problem>();
  private readonly codeByRenderedPrompt: Problem[] = [];
  /** Math problems as the `math-python-tool` environment asks them (any math problem may be run in it). */
  private readonly toolByMessage = new Map<string, string[]>();

  constructor(problems: readonly Problem[]) {
    for (const problem of problems) {
      if (!problem.code) this.byMessage.set(mathUserMessage(problem.problem), problem.gold);
      if (!problem.code) this.byProblem.set(problem.problem, problem.gold);
      if (!problem.code) this.toolByMessage.set(`${problem.problem}\n\n${TOOL_INSTRUCTION}`, problem.gold);
      else if (isRenderedPrompt(problem.problem)) this.codeByRenderedPrompt.push(problem);
      else this.codeByMessage.set(codeUserMessage(problem.problem), problem);
    }
  }

  /** Finds a code problem in a decoded context, by its user message or its already rendered prompt. */
  lookUpCode(decodedContext: string): Problem | undefined {
    const end = decodedContext.indexOf(CODE_INSTRUCTION);
    if (end >= 0) {
      const head = decodedContext.slice(0, end + CODE_INSTRUCTION.length);
      for (const [message, problem] of this.codeByMessage) if (head.endsWith(message)) return problem;
    }
    return this.codeByRenderedPrompt.find((problem) => decodedContext.startsWith(problem.problem));
  }

  /** Finds a math problem asked with the `math-python-tool` instruction. */
  lookUpTool(decodedContext: string): string[] | undefined {
    const end = decodedContext.indexOf(TOOL_INSTRUCTION);
    if (end < 0) return undefined;
    const head = decodedContext.slice(0, end + TOOL_INSTRUCTION.length);
    for (const [message, gold] of this.toolByMessage) if (head.endsWith(message)) return gold;
    return undefined;
  }

  /**
   * Finds the problem in a decoded context: the first user message is rendered verbatim by every chat template. An
   * agent program asks the problem as it is, with no instruction: its first user message (Qwen3's markers) is then the
   * problem's text exactly.
   */
  lookUp(decodedContext: string): string[] | undefined {
    const end = decodedContext.indexOf(MATH_INSTRUCTION);
    if (end < 0) return this.byProblem.get(firstUserMessage(decodedContext) ?? '');
    const head = decodedContext.slice(0, end + MATH_INSTRUCTION.length);
    for (const [message, gold] of this.byMessage) if (head.endsWith(message)) return gold;
    return undefined;
  }
}

/** What a request asks of a simulated generation besides its input. */
export interface GenerationRequest {
  maxNewTokens: number;
  sampling: SamplingParameters;
  /** `top_logprobs_num`: 0 for none. */
  topLogprobs: number;
}

/**
 * One simulated completion: real tokenizer tokens, an EOS when it fits, plausible logprobs. The text does not depend
 * on the sampling (the answer is decided by the configured probability), but the logprobs are those of the sampling
 * distribution around each written token (token-distribution.ts), drawn with as many random numbers as ever.
 */
export function simulateGeneration(
  tokenizer: ModelTokenizer,
  book: AnswerBook,
  config: SimulatedPolicyConfig,
  inputIds: readonly number[],
  request: GenerationRequest,
  random: () => number,
): SimulatedGeneration {
  const { maxNewTokens } = request;
  const decoded = tokenizer.decodeAll(inputIds);
  const turn = Math.max(0, decoded.split('<|im_start|>assistant').length - 2);
  const correct = random() < correctProbabilityAt(config, turn);
  const sentences = Math.max(1, Math.round((config.reasoningTokens / 12) * (0.5 + random())));
  const codeProblem = book.lookUpCode(decoded);
  const text = codeProblem
    ? writeCodeAnswer(codeProblem, correct, random)
    : (writeToolCallAnswer(decoded, () => writeAnswer(book.lookUp(decoded), correct, sentences, random), random) ??
      writeEnvironmentAnswer(decoded, (context) => book.lookUpTool(context), correct, sentences, random) ??
      writeAnswer(book.lookUp(decoded), correct, sentences, random));
  const ids = [...tokenizer.encode(text), tokenizer.eosTokenId];
  const outputIds = ids.slice(0, maxNewTokens);
  const drawn = outputIds.map(() => -Math.abs(gaussian(random)) * 0.35);
  const { logprobs, top } = returnedLogprobs(outputIds, drawn, request.sampling, config.logprobs ?? 'processed', request.topLogprobs);
  const finishReason =
    outputIds.length === ids.length
      ? { type: 'stop' as const, matched: tokenizer.eosTokenId }
      : { type: 'length' as const, length: outputIds.length };
  return { outputIds, logprobs, ...(top ? { topLogprobs: top } : {}), finishReason, turn, correct };
}

function gaussian(random: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
}

/** The content of the context's first user message, in Qwen3's (ChatML) markers; undefined when it has none. */
function firstUserMessage(decodedContext: string): string | undefined {
  const start = decodedContext.indexOf('<|im_start|>user\n');
  if (start < 0) return undefined;
  const from = start + '<|im_start|>user\n'.length;
  const end = decodedContext.indexOf('<|im_end|>', from);
  return end < 0 ? undefined : decodedContext.slice(from, end);
}
