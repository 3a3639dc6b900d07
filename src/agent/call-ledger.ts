import { observationTokens } from '../tokens/conversation-tokens.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { ToolChatMessage } from '../tokens/tool-call-format.js';
import type { ToolDefinition } from '../tokens/tool-definitions.js';
import { matchHistory, type ForkReason } from './fork-reason.js';
import type { TokenSequence } from './token-sequences.js';

/**
 * The token-in, token-out ledger of one agent trajectory: its token sequences and the conversation the last one stands
 * for (the program's messages and the model's replies, as the program was sent them). Plain data, so it can be stored
 * and read back; every function returns a new ledger and leaves the one it was given as it was.
 */
export interface CallLedger {
  /** Chat template variables fixed for the trajectory (`enable_thinking`, `date_string`). */
  variables: Readonly<Record<string, unknown>>;
  tools: ToolDefinition[];
  messages: ToolChatMessage[];
  /** The first sequence, then one per fork; the last is the one calls extend. */
  sequences: TokenSequence[];
  /** Calls matched so far: the next call's index. */
  calls: number;
  /** `call`: waiting for the program's next call; `turn`: the last call's prompt waits for its generated turn. */
  awaiting: 'call' | 'turn';
}

/** What the next generated turn starts from, and how it came about. */
export type CallMatch =
  | { kind: 'start'; ledger: CallLedger; promptIds: number[] }
  /** `newIds`: the tokens appended after the last turn's output, cut from the template; `promptIds` ends with them. */
  | { kind: 'extend'; ledger: CallLedger; promptIds: number[]; newIds: number[]; appended: ToolChatMessage[] }
  | { kind: 'fork'; ledger: CallLedger; promptIds: number[]; reason: ForkReason };

/** A ledger used out of order: a call matched before the last one's turn was recorded, or a turn without a call. */
export class LedgerOrderError extends Error {
  override readonly name = 'LedgerOrderError';
}

/** A ledger before the agent's first call. */
export function openLedger(variables: Readonly<Record<string, unknown>> = {}): CallLedger {
  return { variables, tools: [], messages: [], sequences: [], calls: 0, awaiting: 'call' };
}

/**
 * Matches a call's messages and tools with the ledger. When the recorded conversation is an exact prefix of the call's
 * (by meaning: fork-reason.ts), only the appended messages become tokens, cut from the template after the last turn's
 * output exactly as an environment's observations are (observationTokens): the history is never rendered again, since
 * Qwen3's template renders an assistant turn differently depending on what follows and drops earlier thinking.
 * Otherwise the program rewrote its history: the call's messages are rendered from scratch (tools, generation prompt)
 * as a new sequence, recorded with the reason; the earlier sequences keep their tokens.
 */
export function matchCall(
  tokenizer: ModelTokenizer,
  ledger: CallLedger,
  call: { messages: readonly ToolChatMessage[]; tools: readonly ToolDefinition[] },
): CallMatch {
  if (ledger.awaiting !== 'call') throw new LedgerOrderError(`call ${ledger.calls} arrived before the turn of call ${ledger.calls - 1} was recorded`);
  const current = ledger.sequences.at(-1);
  const next = { ...ledger, messages: [...call.messages], tools: [...call.tools], calls: ledger.calls + 1, awaiting: 'turn' as const };
  if (!current) {
    const promptIds = rendered(tokenizer, ledger, call);
    return {
      kind: 'start',
      promptIds,
      ledger: { ...next, sequences: [{ start: { kind: 'first-call', call: ledger.calls }, ids: promptIds, generated: [] }] },
    };
  }
  const history = matchHistory(ledger, call);
  if (history.kind === 'forks') {
    const promptIds = rendered(tokenizer, ledger, call);
    const sequence: TokenSequence = { start: { kind: 'fork', call: ledger.calls, reason: history.reason }, ids: promptIds, generated: [] };
    return { kind: 'fork', reason: history.reason, promptIds, ledger: { ...next, sequences: [...ledger.sequences, sequence] } };
  }
  const outputHadEos = current.ids.at(-1) === tokenizer.eosTokenId;
  const newIds = observationTokens(tokenizer, history.appended, outputHadEos).ids;
  const promptIds = [...current.ids, ...newIds];
  return {
    kind: 'extend',
    promptIds,
    newIds,
    appended: history.appended,
    ledger: { ...next, sequences: [...ledger.sequences.slice(0, -1), { ...current, ids: promptIds }] },
  };
}

/**
 * Records the turn generated for the last matched call: its output ids as sampled (the EOS included when the model
 * wrote one; none when the length limit cut it), and the assistant message the program is answered with
 * (chat-completion-response.ts), which the program must send back unchanged for its next call to extend the sequence.
 */
export function recordTurn(ledger: CallLedger, outputIds: readonly number[], reply: ToolChatMessage): CallLedger {
  if (ledger.awaiting !== 'turn') throw new LedgerOrderError(`a turn was recorded with no call waiting for it (after call ${ledger.calls - 1})`);
  const current = ledger.sequences.at(-1)!;
  const span = { call: ledger.calls - 1, start: current.ids.length, end: current.ids.length + outputIds.length };
  const sequence = { ...current, ids: [...current.ids, ...outputIds], generated: [...current.generated, span] };
  return { ...ledger, messages: [...ledger.messages, reply], sequences: [...ledger.sequences.slice(0, -1), sequence], awaiting: 'call' };
}

function rendered(
  tokenizer: ModelTokenizer,
  ledger: CallLedger,
  call: { messages: readonly ToolChatMessage[]; tools: readonly ToolDefinition[] },
): number[] {
  const tools = call.tools.length === 0 ? {} : { tools: call.tools };
  return tokenizer.encode(tokenizer.renderChat(call.messages, true, { ...tools, variables: ledger.variables }));
}
