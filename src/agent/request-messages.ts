import { z } from 'zod';
import type { ToolChatMessage } from '../tokens/tool-call-format.js';
import { readableIssue } from '../trajectory/schema-problems.js';
import { AgentRequestError } from './agent-request-error.js';

/**
 * The messages of a chat completions request as the chat template and the call ledger read them, by meaning rather
 * than by wire spelling:
 * - content as one string: text parts joined by a newline (as vLLM joins them), `null` or absent as `''`;
 * - `developer` as `system` (OpenAI's newer name for it; Qwen3's template would silently drop a `developer` turn);
 * - an assistant's `reasoning_content` (or vLLM's newer `reasoning`), kept when it is a string;
 * - tool calls' `function.arguments` parsed from their JSON string into a value, since templates render them with
 *   `tojson` and SDKs re-serialise them (spacing, key order) between calls;
 * - fields that change nothing the model reads (`name` on a message, an assistant's `refusal: null`, `annotations`)
 *   left out.
 * Throws AgentRequestError naming the field: a content part other than text, the deprecated `function` role or
 * `function_call`, assistant audio, arguments that are not a JSON object.
 */
export function conversationMessages(raw: readonly { role: string }[]): ToolChatMessage[] {
  return raw.map((message, index) => conversationMessage(message, `messages[${index}]`));
}

const contentParts = z.array(z.looseObject({ type: z.string(), text: z.string().optional() }));
const content = z.union([z.string(), contentParts]);
const optionalContent = content.nullable().optional();
const toolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const shapes = {
  system: z.looseObject({ content }),
  developer: z.looseObject({ content }),
  user: z.looseObject({ content }),
  assistant: z.looseObject({
    content: optionalContent,
    reasoning_content: z.string().nullable().optional(),
    reasoning: z.string().nullable().optional(),
    tool_calls: z.array(toolCall).nullable().optional(),
    audio: z.unknown().optional(),
    function_call: z.unknown().optional(),
  }),
  tool: z.looseObject({ content, tool_call_id: z.string() }),
} as const;

function conversationMessage(raw: { role: string }, at: string): ToolChatMessage {
  if (raw.role === 'function') {
    throw new AgentRequestError(
      'unsupported-field',
      `${at}.role`,
      'the deprecated "function" role is not supported: declare tools and answer with "tool" messages',
    );
  }
  if (!(raw.role in shapes)) {
    throw new AgentRequestError(
      'invalid-request',
      `${at}.role`,
      `expected one of system, developer, user, assistant, tool, got ${JSON.stringify(raw.role)}`,
    );
  }
  const role = raw.role as keyof typeof shapes;
  const parsed = shapes[role].safeParse(raw, { error: readableIssue });
  if (!parsed.success) throw requestShapeError(parsed.error.issues, at);
  const message = parsed.data as z.infer<(typeof shapes)['assistant']> & { tool_call_id?: string };
  const text = contentText(message.content, `${at}.content`);
  switch (role) {
    case 'system':
    case 'developer':
      return { role: 'system', content: text };
    case 'user':
      return { role: 'user', content: text };
    case 'tool':
      return { role: 'tool', tool_call_id: message.tool_call_id!, content: text };
    case 'assistant':
      return assistantMessage(message, text, at);
  }
}

function assistantMessage(message: z.infer<(typeof shapes)['assistant']>, text: string, at: string): ToolChatMessage {
  if (message.audio !== undefined && message.audio !== null) {
    throw new AgentRequestError('unsupported-field', `${at}.audio`, 'audio is not supported: the policy reads and writes text');
  }
  if (message.function_call !== undefined && message.function_call !== null) {
    throw new AgentRequestError('unsupported-field', `${at}.function_call`, 'the deprecated function_call is not supported: use tool_calls');
  }
  const reasoning = message.reasoning_content ?? message.reasoning ?? undefined;
  const calls = message.tool_calls ?? [];
  return {
    role: 'assistant',
    content: text,
    ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
    ...(calls.length === 0
      ? {}
      : {
          tool_calls: calls.map((call, i) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.function.name, arguments: argumentsObject(call.function.arguments, `${at}.tool_calls[${i}].function.arguments`) },
          })),
        }),
  };
}

function contentText(value: z.infer<typeof optionalContent>, at: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  return value
    .map((part, i) => {
      if (part.type !== 'text' || part.text === undefined) {
        throw new AgentRequestError(
          'unsupported-content',
          `${at}[${i}].type`,
          `${JSON.stringify(part.type)} parts are not supported: the policy reads text only`,
        );
      }
      return part.text;
    })
    .join('\n');
}

function argumentsObject(json: string, at: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    throw new AgentRequestError('invalid-tool-arguments', at, "is not valid JSON (OpenAI sends a tool call's arguments as a JSON string)");
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new AgentRequestError('invalid-tool-arguments', at, 'must be a JSON object');
  }
  return value as Record<string, unknown>;
}

/** The first problem zod found, as a refusal naming its field under `at`. */
export function requestShapeError(issues: readonly z.core.$ZodIssue[], at: string): AgentRequestError {
  const issue = issues[0]!;
  const path = issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : `.${String(key)}`)).join('');
  const field = at === '' ? path.replace(/^\./, '') || '(body)' : `${at}${path}`;
  return new AgentRequestError('invalid-request', field, issue.message);
}
