import { z } from 'zod';
import type { ToolChatMessage } from '../tokens/tool-call-format.js';
import { toolSet, ToolDefinitionError, type ToolDefinition } from '../tokens/tool-definitions.js';
import type { SamplingParameters } from '../trajectory/sampling.js';
import { readableIssue } from '../trajectory/schema-problems.js';
import { AgentRequestError } from './agent-request-error.js';
import { conversationMessages, requestShapeError } from './request-messages.js';

/** What the trajectory fixes for every call its agent makes: the run's sampling and the per-turn token budget. */
export interface CallTerms {
  sampling: SamplingParameters;
  maxNewTokens: number;
}

/** A chat completions request as the trajectory serves it: the messages and tools by meaning, the fields it honours. */
export interface ChatCompletionRequest {
  /** The name the program asked for, echoed in the response: the trajectory's policy answers whatever it is. */
  model: string;
  messages: ToolChatMessage[];
  /** The tools offered, as the chat template receives them (`strict` left out); empty when none. */
  tools: ToolDefinition[];
  stream: boolean;
  /** `stream_options.include_usage`: a last chunk carries the usage. */
  streamUsage: boolean;
  /** Return the behaviour logprobs of the sampled tokens. */
  logprobs: boolean;
  /** The turn's length limit: `max_completion_tokens` (or the older `max_tokens`), else the trajectory's budget. */
  maxTokens: number;
}

const optional = <T extends z.ZodType>(schema: T) => schema.nullable().optional();
const toolShape = z.looseObject({
  type: z.string(),
  function: optional(z.looseObject({ name: z.string(), description: optional(z.string()), parameters: optional(z.record(z.string(), z.unknown())) })),
});
const requestShape = z.looseObject({
  model: z.string(),
  messages: z.array(z.looseObject({ role: z.string() })).min(1),
  tools: optional(z.array(toolShape)),
  tool_choice: optional(z.union([z.string(), z.looseObject({ type: z.string() })])),
  parallel_tool_calls: optional(z.boolean()),
  stream: optional(z.boolean()),
  stream_options: optional(z.looseObject({ include_usage: optional(z.boolean()) })),
  max_tokens: optional(z.int().positive()),
  max_completion_tokens: optional(z.int().positive()),
  logprobs: optional(z.boolean()),
  top_logprobs: optional(z.int().nonnegative()),
  n: optional(z.int().positive()),
  temperature: optional(z.number()),
  top_p: optional(z.number()),
  top_k: optional(z.int()),
  min_p: optional(z.number()),
  repetition_penalty: optional(z.number()),
  presence_penalty: optional(z.number()),
  frequency_penalty: optional(z.number()),
  stop: optional(z.union([z.string(), z.array(z.string())])),
  response_format: optional(z.looseObject({ type: z.string() })),
  logit_bias: optional(z.record(z.string(), z.number())),
  modalities: optional(z.array(z.string())),
});
type RequestShape = z.infer<typeof requestShape>;

/**
 * Accepted and ignored: the draw's seed (it picks the draw, not the distribution, so the behaviour logprobs stay those
 * of the trajectory's sampling; a re-run program is answered from the call store anyway), and OpenAI's bookkeeping,
 * prompt caching's settings included (the OpenAI Python SDK's `prompt_cache_retention` and `prompt_cache_options`).
 */
const IGNORED = [
  'seed',
  'user',
  'store',
  'metadata',
  'service_tier',
  'safety_identifier',
  'prompt_cache_key',
  'prompt_cache_retention',
  'prompt_cache_options',
];

/** Known, and refused whenever set: each needs something a token-exact turn under the run's sampling cannot give. */
const REFUSED: Record<string, string> = {
  functions: 'the deprecated functions are not supported: declare tools',
  function_call: 'the deprecated function_call is not supported: declare tools',
  audio: 'audio output is not supported: the policy writes text',
  prediction: "predicted outputs are not supported: a turn is generated token by token under the run's sampling",
  web_search_options: 'web search is not supported: the agent program runs its own tools',
  reasoning_effort: "reasoning_effort is not supported: the chat template's variables are the run's, fixed for the trajectory",
  verbosity: "verbosity is not supported: the chat template's variables are the run's, fixed for the trajectory",
  chat_template_kwargs: "chat_template_kwargs is not supported: the chat template's variables are the run's, fixed for the trajectory",
};

const KNOWN = new Set([...Object.keys(requestShape.shape), ...IGNORED]);

/** Request fields and the trajectory's sampling parameter each must equal when given (vLLM's names for the last three). */
const SAMPLING_FIELDS = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['min_p', 'minP'],
  ['repetition_penalty', 'repetitionPenalty'],
] as const;

/**
 * Reads an agent program's chat completions request (the JSON body) under the trajectory's terms. Honoured: the
 * messages and function tools, `stream` and `stream_options.include_usage`, `logprobs`, a smaller `max_tokens` /
 * `max_completion_tokens`, and `tool_choice: "auto"`, `parallel_tool_calls: true`, `n: 1`, `top_logprobs: 0`, a text
 * `response_format`, empty `stop` and `logit_bias`, zero penalties, and any sampling field equal to the trajectory's,
 * as no-ops. Ignored: `model` (echoed), `seed`, OpenAI's bookkeeping (`user`, `store`, `metadata`...). Everything else
 * is refused (AgentRequestError, with a `kind` and the field): an agent's turn is one token-exact sample from the run's
 * sampling, so nothing may change the distribution, constrain the decoding or ask for more than one sample.
 */
export function parseChatCompletionRequest(body: unknown, terms: CallTerms): ChatCompletionRequest {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new AgentRequestError('invalid-request', '(body)', 'a chat completions request is a JSON object');
  }
  const refusedField = Object.keys(body).find((key) => key in REFUSED && (body as Record<string, unknown>)[key] != null);
  if (refusedField) throw new AgentRequestError('unsupported-field', refusedField, REFUSED[refusedField]!);
  const unknown = Object.keys(body).find((key) => !KNOWN.has(key) && !(key in REFUSED));
  if (unknown) {
    throw new AgentRequestError(
      'unknown-field',
      unknown,
      'is not a chat completions field this endpoint knows; it is refused, not dropped, since it could change the sampling unseen',
    );
  }
  const parsed = requestShape.safeParse(body, { error: readableIssue });
  if (!parsed.success) throw requestShapeError(parsed.error.issues, '');
  const request = parsed.data;
  refuseUnsupported(request);
  checkSampling(request, terms.sampling);
  return {
    model: request.model,
    messages: conversationMessages(request.messages),
    tools: offeredTools(request.tools ?? []),
    stream: request.stream ?? false,
    streamUsage: request.stream_options?.include_usage ?? false,
    logprobs: request.logprobs ?? false,
    maxTokens: turnLimit(request, terms.maxNewTokens),
  };
}

function refuseUnsupported(request: RequestShape): void {
  const refuse = (field: string, reason: string): never => {
    throw new AgentRequestError('unsupported-field', field, reason);
  };
  if ((request.n ?? 1) !== 1) refuse('n', "only n = 1: one call is one turn of one trajectory (a group's samples are trajectories of their own)");
  const choice = request.tool_choice ?? 'auto';
  if (choice !== 'auto') {
    refuse(
      'tool_choice',
      'only "auto": forcing or forbidding a call needs constrained decoding, and the behaviour logprobs would no longer be those of the run\'s sampling',
    );
  }
  if (request.parallel_tool_calls === false) refuse('parallel_tool_calls', 'only true: limiting the calls a turn writes needs constrained decoding');
  if ((request.top_logprobs ?? 0) > 0) refuse('top_logprobs', 'only 0: the turn keeps the logprob of each sampled token, not the alternatives');
  const stop = request.stop ?? [];
  if (stop.length > 0) refuse('stop', 'stop sequences are not supported: a turn ends at the end-of-turn token or the length limit');
  if (request.response_format && request.response_format.type !== 'text') {
    refuse('response_format', `only {"type": "text"}: ${JSON.stringify(request.response_format.type)} output needs constrained decoding`);
  }
  if (Object.keys(request.logit_bias ?? {}).length > 0)
    refuse('logit_bias', 'is not supported: it changes the distribution the trajectory samples from');
  if (request.modalities && request.modalities.some((modality) => modality !== 'text')) refuse('modalities', 'only ["text"]');
  for (const tool of request.tools ?? [])
    if (tool.type !== 'function') refuse('tools', `only function tools, got a ${JSON.stringify(tool.type)} tool`);
}

function checkSampling(request: RequestShape, sampling: SamplingParameters): void {
  for (const [field, parameter] of SAMPLING_FIELDS) {
    const asked = request[field];
    if (asked === undefined || asked === null) continue;
    // vLLM reads top_k 0 and -1 alike: no top-k.
    const same = field === 'top_k' ? (asked <= 0 ? -1 : asked) === sampling.topK : asked === sampling[parameter];
    if (!same) {
      throw new AgentRequestError(
        'sampling-mismatch',
        field,
        `asks for ${asked}, but this trajectory samples at ${field} ${sampling[parameter]}: the run's sampling is the trajectory's, so leave ${field} out or send ${sampling[parameter]}`,
      );
    }
  }
  for (const field of ['presence_penalty', 'frequency_penalty'] as const) {
    const asked = request[field];
    if (asked !== undefined && asked !== null && asked !== 0) {
      throw new AgentRequestError(
        'sampling-mismatch',
        field,
        `asks for ${asked}, but this trajectory samples with no ${field.replace('_', ' ')}: leave it out or send 0`,
      );
    }
  }
}

function turnLimit(request: RequestShape, budget: number): number {
  const { max_tokens: old, max_completion_tokens: current } = request;
  if (old != null && current != null && old !== current) {
    throw new AgentRequestError('invalid-request', 'max_tokens', `is ${old} but max_completion_tokens is ${current}: send one of them`);
  }
  const asked = current ?? old;
  if (asked == null) return budget;
  if (asked > budget) {
    throw new AgentRequestError(
      'over-budget',
      current == null ? 'max_tokens' : 'max_completion_tokens',
      `asks for ${asked} new tokens, but this trajectory's turns have at most ${budget}`,
    );
  }
  return asked;
}

function offeredTools(tools: RequestShape['tools'] & object): ToolDefinition[] {
  const definitions = tools.map((tool, i): ToolDefinition => {
    const declared = tool.function;
    if (!declared) throw new AgentRequestError('invalid-request', `tools[${i}].function`, 'is required');
    return {
      type: 'function',
      function: {
        name: declared.name,
        ...(declared.description == null ? {} : { description: declared.description }),
        ...(declared.parameters == null ? {} : { parameters: declared.parameters }),
      },
    };
  });
  try {
    toolSet(definitions);
  } catch (error) {
    if (error instanceof ToolDefinitionError) throw new AgentRequestError('invalid-tools', 'tools', error.message);
    throw error;
  }
  return definitions;
}
