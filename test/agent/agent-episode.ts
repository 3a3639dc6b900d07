import { agentReply, type AgentReply } from '../../src/agent/chat-completion-response.js';
import { parseChatCompletionRequest, type CallTerms, type ChatCompletionRequest } from '../../src/agent/chat-completion-request.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { toolCallFormatOf } from '../../src/tokens/tool-call-formats.js';
import { functionTool, toolSet, type ToolDefinition } from '../../src/tokens/tool-definitions.js';
import { DEFAULT_SAMPLING } from '../../src/trajectory/sampling.js';

/** What an agent's trajectory is run under in these tests: the seed's sampling, 256 new tokens a turn. */
export const TERMS: CallTerms = { sampling: DEFAULT_SAMPLING, maxNewTokens: 256 };

export const WEATHER_TOOLS: ToolDefinition[] = [
  functionTool('get_weather', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, 'Current weather in a city'),
  functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
];

/** The program's first messages, as it sends them on the wire. */
export const OPENING = [
  { role: 'system', content: 'You are a careful assistant.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];

/** A chat completions body as an OpenAI client sends it, with the tools in OpenAI's wire shape. */
export function body(messages: readonly unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model: 'policy', messages, tools: WEATHER_TOOLS, ...extra };
}

/** The body read as the endpoint reads it, after a trip through JSON as over HTTP. */
export function request(messages: readonly unknown[], extra: Record<string, unknown> = {}): ChatCompletionRequest {
  return parseChatCompletionRequest(JSON.parse(JSON.stringify(body(messages, extra))), TERMS);
}

/** A generated turn's ids: the text as the model wrote it, then EOS unless the length limit cut it. */
export function output(tok: ModelTokenizer, text: string, eos = true): number[] {
  return [...tok.encode(text), ...(eos ? [tok.eosTokenId] : [])];
}

/** The reply to call `call` for a generated turn, with the request's tools. */
export function reply(tok: ModelTokenizer, outputIds: readonly number[], call: number, tools: readonly ToolDefinition[] = WEATHER_TOOLS): AgentReply {
  return agentReply(tok, toolCallFormatOf(tok), toolSet(tools), outputIds, call);
}
