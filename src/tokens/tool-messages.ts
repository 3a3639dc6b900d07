import { observationTokens, type FeedbackTokens } from './conversation-tokens.js';
import type { ChatMessage, ModelTokenizer } from './model-tokenizer.js';
import type { ToolCallFormat, ToolChatMessage, ToolResult } from './tool-call-format.js';
import type { ToolCallTurn } from './tool-call-turn.js';
import type { ToolSet } from './tool-definitions.js';

/** A well-formed call was left without a result: the caller's bug, not the model's. */
export class MissingToolResultError extends Error {
  override readonly name = 'MissingToolResultError';
}

/**
 * Prompt ids of an episode that offers tools: its messages rendered by the chat template with `tools` (Qwen3 lists
 * them in the system turn, Llama 3.1 in the first user turn), ready for the assistant's first turn.
 */
export function toolPromptIds(
  tokenizer: ModelTokenizer,
  messages: readonly ChatMessage[],
  tools: ToolSet,
  variables?: Readonly<Record<string, unknown>>,
): number[] {
  return tokenizer.encode(tokenizer.renderChat(messages, true, { tools: tools.definitions, ...(variables ? { variables } : {}) }));
}

/**
 * The messages that answer a turn's calls, in the order they were written: each well-formed call's result (matched by
 * id) and each malformed call's observation. Throws MissingToolResultError when a well-formed call has no result.
 */
export function toolResultMessages(format: ToolCallFormat, turn: ToolCallTurn, results: readonly ToolResult[]): ToolChatMessage[] {
  const byId = new Map(results.map((result) => [result.id, result]));
  const answers: { index: number; result: ToolResult }[] = turn.malformed.map((call) => ({
    index: call.index,
    result: { id: call.id, name: call.name ?? '', content: call.observation },
  }));
  for (const call of turn.toolCalls) {
    const result = byId.get(call.id);
    if (!result) throw new MissingToolResultError(`tool call ${call.id} (${call.name}) has no result`);
    answers.push({ index: call.index, result });
  }
  return answers.sort((a, b) => a.index - b.index).map(({ result }) => format.resultMessage(result));
}

/**
 * Tokens to append after a turn that called tools: the end of the assistant turn, the result messages and the next
 * generation prompt, cut from the template's own rendering (conversation-tokens.ts), so prompt + output + these
 * tokens are the tokens of the whole conversation rendered by the template.
 */
export function toolResultTokens(tokenizer: ModelTokenizer, messages: readonly ToolChatMessage[], outputHadEos: boolean): FeedbackTokens {
  return observationTokens(tokenizer, messages, outputHadEos);
}

/**
 * The turn as an assistant message with `tool_calls` (arguments as objects, as templates expect; the OpenAI wire
 * format wants them as JSON strings) and `reasoning_content`. Rendered by the template it gives back the turn's text
 * when the model wrote its calls as the template does; malformed calls are left out, so re-rendering such a turn
 * loses them (the trajectory keeps the generated tokens and never re-renders them).
 */
export function assistantToolCallMessage(turn: ToolCallTurn): ToolChatMessage {
  return {
    role: 'assistant',
    content: turn.content,
    ...(turn.reasoning === undefined ? {} : { reasoning_content: turn.reasoning }),
    ...(turn.toolCalls.length === 0
      ? {}
      : {
          tool_calls: turn.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }),
  };
}
