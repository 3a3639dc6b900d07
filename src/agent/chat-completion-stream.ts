import type { ChatCompletion, ChatCompletionUsage, FinishReason, TokenLogprob } from './chat-completion-response.js';

/** One server-sent chunk of a streamed answer, in OpenAI's shape. */
export interface ChatCompletionChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: { index: 0; delta: ChunkDelta; finish_reason: FinishReason | null; logprobs: { content: TokenLogprob[] } | null }[];
  /** With `stream_options.include_usage`: null on every chunk but the last, which has no choices. */
  usage?: ChatCompletionUsage | null;
}

export interface ChunkDelta {
  role?: 'assistant';
  content?: string | null;
  reasoning_content?: string;
  tool_calls?: { index: number; id: string; type: 'function'; function: { name: string; arguments: string } }[];
  malformed_tool_calls?: ChatCompletion['choices'][0]['message']['malformed_tool_calls'];
}

/**
 * The chunks of a streamed answer, cut from the very message the non-streamed answer holds (the turn is generated in
 * full before the call is answered, durably), so a streaming client assembles the same result: the role with the
 * logprobs, the reasoning, the content, each tool call whole (an OpenAI accumulator appends its arguments), the finish
 * reason, then the usage when asked for.
 */
export function chatCompletionChunks(completion: ChatCompletion, options: { includeUsage: boolean }): ChatCompletionChunk[] {
  const [choice] = completion.choices;
  const { message } = choice;
  const usage = options.includeUsage ? { usage: null } : {};
  const chunk = (delta: ChunkDelta, finish: FinishReason | null = null, logprobs: ChatCompletionChunk['choices'][0]['logprobs'] = null) => ({
    id: completion.id,
    object: 'chat.completion.chunk' as const,
    created: completion.created,
    model: completion.model,
    choices: [{ index: 0 as const, delta, finish_reason: finish, logprobs }],
    ...usage,
  });
  const chunks: ChatCompletionChunk[] = [chunk({ role: 'assistant', content: '' }, null, choice.logprobs)];
  if (message.reasoning_content !== undefined) chunks.push(chunk({ reasoning_content: message.reasoning_content }));
  if (message.content) chunks.push(chunk({ content: message.content }));
  (message.tool_calls ?? []).forEach((call, index) => chunks.push(chunk({ tool_calls: [{ index, ...call }] })));
  if (message.malformed_tool_calls) chunks.push(chunk({ malformed_tool_calls: message.malformed_tool_calls }));
  chunks.push(chunk({}, choice.finish_reason));
  if (options.includeUsage) chunks.push({ ...chunk({}), choices: [], usage: completion.usage });
  return chunks;
}

/** The chunks as a `text/event-stream` body: one `data:` event each, then `data: [DONE]`. */
export function serverSentEvents(chunks: readonly ChatCompletionChunk[]): string {
  return [...chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`), 'data: [DONE]\n\n'].join('');
}
