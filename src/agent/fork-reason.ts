import type { ToolChatMessage } from '../tokens/tool-call-format.js';
import type { ToolDefinition } from '../tokens/tool-definitions.js';
import { canonicalJson } from './canonical-json.js';

/** The part of a message that differs from the one recorded at its place. */
export type MessageField = 'role' | 'content' | 'tool_calls' | 'tool_call_id' | 'reasoning_content';

/**
 * Why an agent's call could not extend the trajectory's token sequence, so that a new sequence was rendered from the
 * call's messages (indices are into the recorded messages, which hold the model's replies too):
 * - `changed-tools`: the tools offered are not those of the sequence (the template writes them into the prompt);
 * - `dropped-messages`: `count` recorded messages from `index` on are missing (truncation, or a retried call);
 * - `inserted-messages`: `count` messages appear at `index` before the recorded ones go on;
 * - `dropped-reasoning`: the reply at `index` came back without the reasoning the model wrote;
 * - `rewrote-message`: the message at `index` differs in `field` (an edited or summarised message, a changed system
 *   prompt, a reply whose content or calls were altered).
 */
export type ForkReason =
  | { kind: 'changed-tools' }
  | { kind: 'dropped-messages'; index: number; count: number }
  | { kind: 'inserted-messages'; index: number; count: number }
  | { kind: 'dropped-reasoning'; index: number }
  | { kind: 'rewrote-message'; index: number; role: string; field: MessageField };

/** How a call's messages and tools relate to the recorded ones: they extend them (the new messages), or they fork. */
export type HistoryMatch = { kind: 'extends'; appended: ToolChatMessage[] } | { kind: 'forks'; reason: ForkReason };

/** Compares a call with the recorded conversation by meaning (messageDifference), never by wire spelling. */
export function matchHistory(
  recorded: { messages: readonly ToolChatMessage[]; tools: readonly ToolDefinition[] },
  call: { messages: readonly ToolChatMessage[]; tools: readonly ToolDefinition[] },
): HistoryMatch {
  if (canonicalJson(recorded.tools) !== canonicalJson(call.tools)) return { kind: 'forks', reason: { kind: 'changed-tools' } };
  const old = recorded.messages;
  const sent = call.messages;
  const shared = Math.min(old.length, sent.length);
  const index = [...Array(shared).keys()].find((i) => messageDifference(old[i]!, sent[i]!) !== undefined);
  if (index === undefined) {
    if (sent.length >= old.length) return { kind: 'extends', appended: sent.slice(old.length) };
    return { kind: 'forks', reason: { kind: 'dropped-messages', index: sent.length, count: old.length - sent.length } };
  }
  const field = messageDifference(old[index]!, sent[index]!)!;
  if (field === 'reasoning_content' && sent[index]!.reasoning_content === undefined)
    return { kind: 'forks', reason: { kind: 'dropped-reasoning', index } };
  const resumesAt = old.findIndex((message, j) => j > index && messageDifference(message, sent[index]!) === undefined);
  if (resumesAt > 0) return { kind: 'forks', reason: { kind: 'dropped-messages', index, count: resumesAt - index } };
  const recordedAt = sent.findIndex((message, j) => j > index && messageDifference(old[index]!, message) === undefined);
  if (recordedAt > 0) return { kind: 'forks', reason: { kind: 'inserted-messages', index, count: recordedAt - index } };
  return { kind: 'forks', reason: { kind: 'rewrote-message', index, role: old[index]!.role, field } };
}

/**
 * The first field in which `sent` differs from `recorded`, undefined when they mean the same: content as text, tool
 * calls by id, name and arguments as values (SDKs re-serialise arguments), reasoning last, so that a reply differing
 * only by its missing reasoning reads as dropped reasoning.
 */
export function messageDifference(recorded: ToolChatMessage, sent: ToolChatMessage): MessageField | undefined {
  if (recorded.role !== sent.role) return 'role';
  if (recorded.content !== sent.content) return 'content';
  if (canonicalJson(recorded.tool_calls ?? []) !== canonicalJson(sent.tool_calls ?? [])) return 'tool_calls';
  if (recorded.tool_call_id !== sent.tool_call_id) return 'tool_call_id';
  if (recorded.reasoning_content !== sent.reasoning_content) return 'reasoning_content';
  return undefined;
}
