import type { ChatMessage } from './model-tokenizer.js';

/**
 * How one model family writes tool calls and reads their results, as its chat template teaches it. A format only
 * finds the calls in a turn's text; checking them (JSON, known tool, arguments against the schema) is the same for
 * every family (tool-call-turn.ts). Add a family with registerToolCallFormat (tool-call-formats.ts).
 */
export interface ToolCallFormat {
  /** A short name for logs and errors: `hermes`, `llama3-json`. */
  readonly family: string;
  /** Whether a chat template (its text, as in tokenizer_config.json) is this family's. */
  detect(chatTemplate: string): boolean;
  /**
   * Splits a turn's output text, decoded with its special tokens (`decodeAll`, so `<|python_tag|>` is kept) and
   * without the final end-of-turn token, into content, reasoning and the text of each call.
   */
  parse(text: string): ToolCallText;
  /** The keys of a call's JSON object that may hold its arguments, the one the template writes first. */
  readonly argumentKeys: readonly string[];
  /** How a call is written, for the observation that answers a malformed one. */
  readonly callSyntax: string;
  /** The message that returns one call's result (or a malformed call's observation) to the model. */
  resultMessage(result: ToolResult): ToolChatMessage;
}

/** What a format finds in a turn's text, before any call is checked. */
export interface ToolCallText {
  /** The text outside the reasoning and the calls, trimmed. */
  content: string;
  /** The inside of the turn's reasoning block (Qwen3's `<think>`), when it wrote one. */
  reasoning?: string;
  calls: CallText[];
}

/** One call as written: its JSON text, and whether it was closed (a turn cut off by the length limit may not be). */
export interface CallText {
  json: string;
  complete: boolean;
}

/** A call's result, as the environment or agent returns it. */
export interface ToolResult {
  /** The call's id (ToolCall.id). */
  id: string;
  name: string;
  content: string;
}

/** A chat message with OpenAI's tool fields, as Hugging Face chat templates read them. */
export interface ToolChatMessage extends ChatMessage {
  /** An assistant turn's calls; `arguments` is an object here (templates serialise it with `tojson`). */
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: Record<string, unknown> } }[];
  /** A tool message's call. */
  tool_call_id?: string;
  name?: string;
  /** An assistant turn's reasoning, rendered by templates that keep it (Qwen3's, after the last user query). */
  reasoning_content?: string;
}

/** A `tool` role message: what Hermes and Llama 3 templates expect (Llama 3's renders it under its `ipython` header). */
export function toolRoleMessage(result: ToolResult): ToolChatMessage {
  return { role: 'tool', tool_call_id: result.id, name: result.name, content: result.content };
}
