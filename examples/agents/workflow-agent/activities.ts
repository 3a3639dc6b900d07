/**
 * The calculator agent's activities: one model call through the trajectory's OpenAI-compatible endpoint (plain fetch:
 * any OpenAI-compatible client works the same, pointed at `baseUrl` with `apiKey`), and two pure tools.
 */
import { ApplicationFailure, heartbeat } from '@temporalio/activity';
import { calculate, convert } from '../calculator-tools.mjs';

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A chat message as sent and as received; a reply is sent back whole, extras included. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content?: string | null;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  reasoning_content?: string;
  malformed_tool_calls?: { observation: string }[];
  [extra: string]: unknown;
}

/** How often a model call heartbeats while its turn is generated. */
const HEARTBEAT_MS = 1_000;

/**
 * One model call: POST `${baseUrl}/chat/completions`, returning the reply's message. A 4xx is the endpoint refusing
 * the call (a diverged call, a turn past the limit, a request it cannot serve): asking again cannot help, so it fails
 * non-retryable. Anything else (a 5xx, a connection refused) is thrown to be retried.
 */
export async function callModel(input: { baseUrl: string; apiKey: string; body: { model: string; messages: ChatMessage[]; tools: unknown[] } }) {
  const beat = setInterval(() => heartbeat(), HEARTBEAT_MS);
  try {
    const response = await fetch(`${input.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${input.apiKey}` },
      body: JSON.stringify(input.body),
    });
    const text = await response.text();
    if (response.status >= 400 && response.status < 500)
      throw ApplicationFailure.nonRetryable(`the model call was refused (${response.status}): ${text}`, 'ModelCallRefused');
    if (!response.ok) throw new Error(`the model call failed (${response.status}): ${text}`);
    const completion = JSON.parse(text) as { choices: { message: ChatMessage }[] };
    return completion.choices[0]!.message;
  } finally {
    clearInterval(beat);
  }
}

export async function calculator({ expression }: { expression: string }): Promise<string> {
  return calculate(expression);
}

export async function unitConvert(input: { value: number; from: string; to: string }): Promise<string> {
  return convert(input);
}
