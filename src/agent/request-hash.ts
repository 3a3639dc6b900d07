import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json.js';
import type { ChatCompletionRequest } from './chat-completion-request.js';

/**
 * A stable hash of what a call asks the policy for: its messages and tools by meaning (as parsed: content as text,
 * tool-call arguments as values, keys sorted) and its length limit. Left out, since they change the answer's form and
 * not the turn: `stream`, `stream_options`, `logprobs` and `model`. Sampling fields are refused unless they equal the
 * trajectory's, so they cannot differ between two calls that are accepted. SHA-256, hex.
 */
export function requestHash(request: ChatCompletionRequest): string {
  const turnTerms = { messages: request.messages, tools: request.tools, maxTokens: request.maxTokens };
  return createHash('sha256').update(canonicalJson(turnTerms)).digest('hex');
}
