import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { ToolCallFormat, ToolChatMessage } from '../tokens/tool-call-format.js';
import { parseTurnOutput, type MalformedToolCallKind } from '../tokens/tool-call-turn.js';
import type { ToolSet } from '../tokens/tool-definitions.js';

/** A turn generated for an agent's call, as stored: enough to answer the call again without generating. */
export interface GeneratedTurn {
  /** The output ids as sampled, with the EOS when the model wrote one (none: the length limit cut it). */
  outputIds: number[];
  /** The behaviour logprob of each output id. */
  logprobs: number[];
  /** Tokens of the prompt the turn was generated from. */
  promptTokens: number;
  /** Unix seconds when it was generated: stored, so a replayed answer is the answer first given. */
  created: number;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls';

/** A call the model wrote that could not be run, as the program is told of it (Ratchet's field, not OpenAI's). */
export interface MalformedCallNotice {
  index: number;
  kind: MalformedToolCallKind;
  /** What the model would be told in a tool loop: the program may send it back, as a user message. */
  observation: string;
}

/** OpenAI's assistant message, with `reasoning_content` as vLLM and DeepSeek return it. */
export interface ChatCompletionMessage {
  role: 'assistant';
  content: string | null;
  refusal: null;
  reasoning_content?: string;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  malformed_tool_calls?: MalformedCallNotice[];
}

export interface TokenLogprob {
  token: string;
  logprob: number;
  /** The token's UTF-8 bytes; null for a token that is part of a character (its text alone is not valid UTF-8). */
  bytes: number[] | null;
  top_logprobs: [];
}

export interface ChatCompletionUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export interface ChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: [{ index: 0; message: ChatCompletionMessage; finish_reason: FinishReason; logprobs: { content: TokenLogprob[] } | null }];
  usage: ChatCompletionUsage;
}

/** How a generated turn answers the program (`wire`), and the same reply as the ledger expects it back (`message`). */
export interface AgentReply {
  wire: ChatCompletionMessage;
  message: ToolChatMessage;
  finishReason: FinishReason;
}

/**
 * Reads a generated turn as the program's answer. Call ids are `call_<call>_<n>`: the same whenever the call is
 * answered again. A turn with a malformed call returns no calls at all: its content is the text the model wrote after
 * its reasoning, calls included, verbatim, with finish reason `stop` (or `length`), and `malformed_tool_calls` says
 * what was wrong with each, so the program can send the observation back. Running the well-formed calls of such a
 * turn while nobody answers the malformed one would teach the model that a malformed call goes unnoticed.
 */
export function agentReply(
  tokenizer: ModelTokenizer,
  format: ToolCallFormat,
  tools: ToolSet,
  outputIds: readonly number[],
  call: number,
): AgentReply {
  const turn = parseTurnOutput(tokenizer, format, tools, outputIds, { idPrefix: `call_${call}_` });
  const cutOff = outputIds.at(-1) !== tokenizer.eosTokenId;
  const reasoning = turn.reasoning === undefined ? {} : { reasoning_content: turn.reasoning };
  if (turn.malformed.length > 0) {
    const content = afterReasoning(tokenizer.decodeAll(cutOff ? outputIds : outputIds.slice(0, -1)), turn.reasoning !== undefined);
    const notices = turn.malformed.map(({ index, kind, observation }) => ({ index, kind, observation }));
    return {
      wire: { role: 'assistant', content, refusal: null, ...reasoning, malformed_tool_calls: notices },
      message: { role: 'assistant', content, ...reasoning },
      finishReason: cutOff ? 'length' : 'stop',
    };
  }
  const calls = turn.toolCalls.map(({ id, name, arguments: args }) => ({ id, type: 'function' as const, name, args }));
  return {
    wire: {
      role: 'assistant',
      content: turn.content === '' && calls.length > 0 ? null : turn.content,
      refusal: null,
      ...reasoning,
      ...(calls.length === 0
        ? {}
        : { tool_calls: calls.map(({ id, type, name, args }) => ({ id, type, function: { name, arguments: JSON.stringify(args) } })) }),
    },
    message: {
      role: 'assistant',
      content: turn.content,
      ...reasoning,
      ...(calls.length === 0 ? {} : { tool_calls: calls.map(({ id, type, name, args }) => ({ id, type, function: { name, arguments: args } })) }),
    },
    finishReason: cutOff ? 'length' : calls.length > 0 ? 'tool_calls' : 'stop',
  };
}

/**
 * The OpenAI response to a call from its generated turn. `logprobs`: one entry per generated token, the EOS included,
 * so they line up with the tokens trained on.
 */
export function chatCompletion(
  tokenizer: ModelTokenizer,
  reply: AgentReply,
  turn: GeneratedTurn,
  answer: { id: string; model: string; logprobs: boolean },
): ChatCompletion {
  return {
    id: answer.id,
    object: 'chat.completion',
    created: turn.created,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: reply.wire,
        finish_reason: reply.finishReason,
        logprobs: answer.logprobs ? { content: tokenLogprobs(tokenizer, turn) } : null,
      },
    ],
    usage: { prompt_tokens: turn.promptTokens, completion_tokens: turn.outputIds.length, total_tokens: turn.promptTokens + turn.outputIds.length },
  };
}

/** The text after the reasoning block (`<think>…</think>`, ToolCallText.reasoning), trimmed; none when cut off inside it. */
function afterReasoning(text: string, hasReasoning: boolean): string {
  if (!hasReasoning) return text.trim();
  const close = text.indexOf('</think>');
  return close < 0 ? '' : text.slice(close + '</think>'.length).trim();
}

function tokenLogprobs(tokenizer: ModelTokenizer, turn: GeneratedTurn): TokenLogprob[] {
  return turn.outputIds.map((id, i) => {
    const token = tokenizer.decodeAll([id]);
    return { token, logprob: turn.logprobs[i]!, bytes: token.includes('\uFFFD') ? null : [...new TextEncoder().encode(token)], top_logprobs: [] };
  });
}
