import type { TrajectoryView, TurnView } from '../store/read/trajectory-view.js';
import { compactJson } from './compact-json.js';

/** One tool call of a reply, its arguments pretty-printed where they are JSON (they are a string on the wire). */
export interface AgentToolCall {
  id: string | null;
  name: string;
  arguments: string;
  /** The arguments string is not JSON: shown as sent. */
  argumentsInvalid: boolean;
}

/** A tool call the endpoint could not parse, and the observation the program was told to send back for it. */
export interface AgentMalformedCall {
  index: number | null;
  kind: string;
  observation: string;
}

/** How the program ended, from the last turn's `info.end`. */
export type AgentEnd =
  | { kind: 'answer'; answer: string }
  | { kind: 'reward'; reward: number | null; success: boolean | null }
  | { kind: 'turn-limit'; turns: number | null }
  | { kind: 'other'; json: string };

/** A turn of an agent program's trajectory as the page shows it: one model call of the program. */
export interface AgentTurn {
  /** The call's index in the program's run (0 for its first call): the turn's index. */
  call: number | null;
  finishReason: string | null;
  /** The OpenAI assistant message the program got. */
  role: string;
  content: string | null;
  reasoning: string | null;
  toolCalls: AgentToolCall[];
  malformed: AgentMalformedCall[];
  /** Why the next call could not extend this turn's sequence (a ForkReason, src/agent/fork-reason.ts); null when it did. */
  fork: Record<string, unknown> | null;
  end: AgentEnd | null;
}

/**
 * The turn as a model call of an agent program, or null for any other turn (its info has no `reply`). Read
 * defensively: the row is written by workers of any release, the reply's content by the model and the program.
 */
export function agentTurn(turn: TurnView): AgentTurn | null {
  const info = turn.info;
  if (!info || !isRecord(info.reply)) return null;
  const reply = info.reply;
  return {
    call: typeof info.call === 'number' ? info.call : null,
    finishReason: typeof info.finishReason === 'string' ? info.finishReason : null,
    role: typeof reply.role === 'string' ? reply.role : 'assistant',
    content: typeof reply.content === 'string' ? reply.content : null,
    reasoning: typeof reply.reasoning_content === 'string' && reply.reasoning_content !== '' ? reply.reasoning_content : null,
    toolCalls: (Array.isArray(reply.tool_calls) ? reply.tool_calls : []).filter(isRecord).map(toolCall),
    malformed: (Array.isArray(reply.malformed_tool_calls) ? reply.malformed_tool_calls : []).filter(isRecord).map((m) => ({
      index: typeof m.index === 'number' ? m.index : null,
      kind: text(m.kind),
      observation: text(m.observation),
    })),
    fork: isRecord(info.fork) ? info.fork : null,
    end: isRecord(info.end) ? agentEnd(info.end) : null,
  };
}

/** Whether the page shows the trajectory as an agent program's: some turn is a model call of one. */
export function isAgentTrajectory(view: TrajectoryView): boolean {
  return view.turns.some((turn) => agentTurn(turn) !== null);
}

function toolCall(call: Record<string, unknown>): AgentToolCall {
  const fn = isRecord(call.function) ? call.function : {};
  const args = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? '');
  let parsed: unknown;
  let invalid = false;
  try {
    parsed = JSON.parse(args);
  } catch {
    invalid = true;
  }
  return {
    id: typeof call.id === 'string' ? call.id : null,
    name: text(fn.name),
    arguments: invalid ? args : compactJson(parsed),
    argumentsInvalid: invalid,
  };
}

function agentEnd(end: Record<string, unknown>): AgentEnd {
  if (end.kind === 'turn-limit') return { kind: 'turn-limit', turns: typeof end.turns === 'number' ? end.turns : null };
  if (end.kind === 'returned' && typeof end.answer === 'string') return { kind: 'answer', answer: end.answer };
  if (end.kind === 'returned' && 'reward' in end) {
    return {
      kind: 'reward',
      reward: typeof end.reward === 'number' ? end.reward : null,
      success: typeof end.success === 'boolean' ? end.success : null,
    };
  }
  return { kind: 'other', json: compactJson(end) };
}

const FIELD_WORDS: Record<string, string> = {
  role: 'its role',
  content: 'its content',
  tool_calls: 'its tool calls',
  tool_call_id: 'its tool_call_id',
  reasoning_content: 'its reasoning',
};

/** A ForkReason in words: what the program's next call did to its history. */
export function forkReasonWords(fork: Record<string, unknown>): string {
  const index = typeof fork.index === 'number' ? fork.index : null;
  const count = typeof fork.count === 'number' ? fork.count : null;
  const at = index === null ? '' : ` (message index ${index} of the conversation so far, counting from 0)`;
  const messages = count === null ? 'messages' : `${count} message${count === 1 ? '' : 's'}`;
  switch (fork.kind) {
    case 'changed-tools':
      return 'the program changed the tools it offers the model';
    case 'dropped-messages':
      return `the program dropped ${messages} of its history${index === null ? '' : ` from message index ${index} on (counting from 0)`}`;
    case 'inserted-messages':
      return `the program inserted ${messages} into its history${index === null ? '' : ` at message index ${index} (counting from 0)`}`;
    case 'dropped-reasoning':
      return `the program dropped the reasoning of earlier replies${index === null ? '' : ` (first at message index ${index} of the conversation, counting from 0)`}`;
    case 'rewrote-message':
      return `the program rewrote the ${typeof fork.role === 'string' ? `${fork.role} ` : ''}message${at}: ${FIELD_WORDS[String(fork.field)] ?? `its ${text(fork.field)}`} changed`;
    default:
      return `the program's next call rewrote its history (${text(fork.kind)})`;
  }
}

/** The fork marker's sentence, for the turn (0-based) whose context was rendered anew. */
export function forkSentence(fork: Record<string, unknown> | null, nextTurn: number): string {
  const reason = fork ? forkReasonWords(fork) : "the program's next call did not extend this conversation";
  return `${reason}: turn ${nextTurn + 1} starts a new token sequence; its context is rendered anew and only its own output is trained on`;
}

/** How the program ended, in words (the last turn's verdict judged it). */
export function endWords(end: AgentEnd, verdict: string | null): string {
  switch (end.kind) {
    case 'answer':
      return `The program returned an answer, judged ${verdict ?? '–'} by the verifier`;
    case 'reward':
      return `The program returned its own reward: program reward ${end.reward ?? '–'} · success ${end.success === null ? '–' : end.success ? 'yes' : 'no'}`;
    case 'turn-limit':
      return `Turn limit: the program made a call past the trajectory's ${end.turns ?? '–'} turns (the turn limit), so the episode was cut there`;
    default:
      return `The program ended: ${end.json}`;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : value === undefined || value === null ? '–' : JSON.stringify(value);
}
