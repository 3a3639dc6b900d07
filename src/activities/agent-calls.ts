import { Context } from '@temporalio/activity';
import type pg from 'pg';
import { matchCall, openLedger, type CallLedger, type CallMatch } from '../agent/call-ledger.js';
import type { ChatCompletionRequest } from '../agent/chat-completion-request.js';
import { agentReply, type AgentReply } from '../agent/chat-completion-response.js';
import type { AgentProgramResult } from '../agent/program-result.js';
import { judgeMathAnswer } from '../environments/math-judge.js';
import { EnvironmentFailure, type JsonValue } from '../environments/environment.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import type { ToolCallFormat } from '../tokens/tool-call-format.js';
import { toolCallFormatOf } from '../tokens/tool-call-formats.js';
import { toolSet } from '../tokens/tool-definitions.js';
import { FailureType } from '../trajectory/failure.js';
import { verdictSucceeded } from '../trajectory/turn.js';
import type { AnswerExtraction, VerifierPool } from '../verifier/index.js';
import { loadAgentRequest } from '../store/write/agent-requests.js';
import { loadStoredOutcome } from '../store/write/stored-outcome.js';
import {
  loadContext,
  loadTurnForJudging,
  savePrompt,
  saveVerdictAndFeedback,
  type EnvironmentStepRecord,
  type StoredJudgement,
} from '../store/write/turn-store.js';
import type { EnvironmentStepResult } from './environment-step.js';
import { classified, storedAsFailed } from './failures.js';
import type { TokenizedPrompt } from './tokenize-prompt.js';

/** A call of the trajectory's agent program, as the workflow names it: its request is in `agent_requests` by hash. */
export interface AgentCallRef {
  trajectoryId: string;
  requestHash: string;
}

/** The call after turn `turn`: its turn's request (`previousHash`) and its own. */
export interface AgentNextCallInput extends AgentCallRef {
  turn: number;
  previousHash: string;
}

/** How the program's episode ended after turn `turn`, answered to call `turn` (`previousHash`). */
export interface AgentEpisodeEndInput {
  trajectoryId: string;
  turn: number;
  previousHash: string;
  end: AgentEpisodeEnd;
  gold: string[];
  extraction?: AnswerExtraction;
}

/** The program returned its result, or made a call past the trajectory's turns (the episode is cut there). */
export type AgentEpisodeEnd = { kind: 'returned'; result: AgentProgramResult } | { kind: 'turn-limit'; turns: number };

/**
 * The steps of an agent program's episode, local activities like an environment's: the first call's prompt, each
 * next call matched to the stored tokens (extend or fork), and the episode's end (the program's result judged). Each
 * keeps "the first outcome stored is the outcome" (src/workflows/RE-RUNS.md): the prompt row, the turn's judgement
 * and its feedback or fork are written once, and a re-run answers with what is stored.
 */
export function agentCallActivities(pool: pg.Pool, tokenizer: ModelTokenizer, verifier: VerifierPool) {
  // Read when a call is first answered: a worker whose model has no known tool-call format still runs everything else.
  let known: ToolCallFormat | undefined;
  const format = () => (known ??= toolCallFormatOf(tokenizer));

  /** The ledger after turn `turn`: the sequence as stored up to its output, and the conversation the program was sent. */
  async function ledgerAfter(
    trajectoryId: string,
    turn: number,
    previous: ChatCompletionRequest,
  ): Promise<{ ledger: CallLedger; reply: AgentReply }> {
    const [context, judged] = await Promise.all([loadContext(pool, trajectoryId, turn), loadTurnForJudging(pool, trajectoryId, turn)]);
    if (!judged) throw new EnvironmentFailure(`trajectory ${trajectoryId} has no output for turn ${turn}`, 'infrastructure');
    const reply = agentReply(tokenizer, format(), toolSet(previous.tools), judged.outputIds, turn);
    const ids = [...context, ...judged.outputIds];
    const ledger: CallLedger = {
      ...openLedger(),
      tools: previous.tools,
      messages: [...previous.messages, reply.message],
      sequences: [{ start: { kind: 'first-call', call: 0 }, ids, generated: [] }],
      calls: turn + 1,
    };
    return { ledger, reply };
  }

  async function request(trajectoryId: string, requestHash: string): Promise<ChatCompletionRequest> {
    const found = await loadAgentRequest(pool, trajectoryId, requestHash);
    if (!found) throw new EnvironmentFailure(`trajectory ${trajectoryId} has no stored agent request ${requestHash.slice(0, 12)}`, 'infrastructure');
    return found;
  }

  return {
    /** The first call's messages and tools rendered with the chat template: the prompt, P_0. */
    async agentFirstCall(input: AgentCallRef): Promise<TokenizedPrompt> {
      return classified(async () => {
        const stored = await storedPromptLen(pool, input.trajectoryId);
        if (stored !== undefined) return { promptLen: stored };
        const first = await request(input.trajectoryId, input.requestHash);
        const match = matchCall(tokenizer, openLedger(), first);
        const promptLen = await savePrompt(pool, input.trajectoryId, match.promptIds, tokenizer.decodeText(match.promptIds));
        return { promptLen: promptLen ?? (await storedPromptLen(pool, input.trajectoryId)) ?? 0 };
      });
    },

    /**
     * The program's next call after turn `turn`: its messages matched with the stored sequence. An extension's new
     * messages are the turn's feedback; a fork's whole context is kept with the turn (`fork_ids`) and starts the next.
     */
    async agentNextCall(input: AgentNextCallInput): Promise<EnvironmentStepResult> {
      return classified(async () => {
        const started = performance.now();
        const judged = await loadTurnForJudging(pool, input.trajectoryId, input.turn);
        if (!judged) return storedStep(input.trajectoryId, input.turn);
        if (judged.judged) return keptStep(input.trajectoryId, input.turn, judged.judged);
        const [previous, next] = await Promise.all([request(input.trajectoryId, input.previousHash), request(input.trajectoryId, input.requestHash)]);
        const { ledger, reply } = await ledgerAfter(input.trajectoryId, input.turn, previous);
        const match = matchCall(tokenizer, ledger, next);
        const record = callRecord(input.turn, reply, match);
        const feedback =
          match.kind === 'extend' ? { ids: match.newIds, text: tokenizer.decodeText(match.newIds) } : { ids: [], text: '', forkIds: match.promptIds };
        const answerText = tokenizer.decodeText(judged.outputIds);
        const verdict = { answerText, extracted: null, status: replyVerdict(reply) };
        const kept = await saveVerdictAndFeedback(pool, input.trajectoryId, input.turn, verdict, feedback, record, performance.now() - started);
        if (!kept) return storedStep(input.trajectoryId, input.turn);
        return keptStep(input.trajectoryId, input.turn, kept);
      });
    },

    /**
     * The episode's end after turn `turn`: the program's result judged (an `answer` by the math verifier against the
     * task's gold, a `reward` as the program gave it), or the turn limit (no success, no reward).
     */
    async agentEpisodeEnd(input: AgentEpisodeEndInput): Promise<EnvironmentStepResult> {
      return classified(async () => {
        const started = performance.now();
        const judged = await loadTurnForJudging(pool, input.trajectoryId, input.turn);
        if (!judged) return storedStep(input.trajectoryId, input.turn);
        if (judged.judged) return keptStep(input.trajectoryId, input.turn, judged.judged);
        const previous = await request(input.trajectoryId, input.previousHash);
        const reply = agentReply(tokenizer, format(), toolSet(previous.tools), judged.outputIds, input.turn);
        const outcome = await judgedEnd(input);
        const record: EnvironmentStepRecord = {
          observations: [],
          reward: outcome.reward,
          success: outcome.success,
          // Cut at the turn limit, the episode ends as any that ran out of turns (end reason `turns`), not as one the program ended.
          done: input.end.kind === 'returned',
          info: { ...callInfo(input.turn, reply), end: outcome.end },
        };
        const verdict = {
          answerText: tokenizer.decodeText(judged.outputIds),
          extracted: outcome.predicted,
          status: outcome.verdict,
          detail: outcome.detail,
        };
        const kept = await saveVerdictAndFeedback(
          pool,
          input.trajectoryId,
          input.turn,
          verdict,
          { ids: [], text: '' },
          record,
          performance.now() - started,
        );
        if (!kept) return storedStep(input.trajectoryId, input.turn);
        return keptStep(input.trajectoryId, input.turn, kept);
      });
    },
  };

  async function judgedEnd(input: AgentEpisodeEndInput) {
    const { end } = input;
    if (end.kind === 'turn-limit') {
      const detail = `the program made a call past the trajectory's ${end.turns} turns: the episode was cut there`;
      return { verdict: 'turn_limit', success: false, reward: 0, predicted: null, detail, end: { kind: end.kind, turns: end.turns } };
    }
    const { result } = end;
    if (result.answer === undefined) {
      const reward = result.reward!;
      const success = result.success ?? reward > 0;
      return { verdict: 'program_reward', success, reward, predicted: null, detail: undefined, end: { kind: end.kind, reward, success } };
    }
    if (input.gold.length === 0) {
      throw new EnvironmentFailure(
        `the agent program returned an answer, but trajectory ${input.trajectoryId} has no gold to judge it against: return a reward instead`,
        'data',
        { failureType: FailureType.AgentResultInvalid },
      );
    }
    const attempt = Context.current().info.attempt;
    const options = input.extraction === undefined ? {} : { extraction: input.extraction };
    const verdict = await judgeMathAnswer(
      verifier,
      { trajectoryId: input.trajectoryId, turn: input.turn, gold: input.gold, text: result.answer, attempt },
      options,
    );
    const success = verdictSucceeded(verdict.status);
    return {
      verdict: verdict.status,
      success,
      reward: success ? 1 : -1,
      predicted: verdict.predicted,
      detail: verdict.detail,
      end: { kind: end.kind, answer: result.answer.slice(-2000) },
    };
  }

  /** The step as kept in the turn's working row (this run's, or an earlier run's that got there first). */
  async function keptStep(trajectoryId: string, turn: number, kept: StoredJudgement): Promise<EnvironmentStepResult> {
    const step = kept.environmentStep;
    const fork = await forkLen(trajectoryId, turn);
    return {
      status: kept.status,
      success: step?.success ?? false,
      predicted: kept.extracted,
      answerTail: kept.answerText.slice(-400),
      feedbackLen: kept.feedbackLen,
      reward: step?.reward ?? 0,
      done: step?.done ?? false,
      ...(fork === undefined ? {} : { contextLen: fork }),
    };
  }

  async function forkLen(trajectoryId: string, turn: number): Promise<number | undefined> {
    const { rows } = await pool.query<{ n: number | null }>(
      'SELECT octet_length(fork_ids) / 4 AS n FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2',
      [trajectoryId, turn],
    );
    return rows[0]?.n ?? undefined;
  }

  /** Run again after the trajectory was stored: the turn as stored, and the next turn's context length from its monitor record. */
  async function storedStep(trajectoryId: string, turn: number): Promise<EnvironmentStepResult> {
    const stored = await loadStoredOutcome(pool, trajectoryId, turn);
    if (stored?.status !== 'completed' || !stored.turn) throw storedAsFailed(trajectoryId, `answer the agent's call after turn ${turn}`);
    const { rows } = await pool.query<{ prompt_len: number }>('SELECT prompt_len FROM monitor_records WHERE trajectory_id = $1 AND turn = $2', [
      trajectoryId,
      turn + 1,
    ]);
    const step = stored.turn.environmentStep;
    return {
      status: stored.turn.verdict,
      success: stored.turn.success,
      predicted: stored.turn.extracted,
      answerTail: stored.turn.answerText.slice(-400),
      feedbackLen: step?.info['fork'] ? 0 : (stored.turn.feedbackLen ?? 0),
      reward: step?.reward ?? 0,
      done: step?.done ?? true,
      ...(rows[0] ? { contextLen: rows[0].prompt_len } : {}),
    };
  }
}

/** The prompt's length once stored (the first call was matched before), or undefined. */
async function storedPromptLen(pool: pg.Pool, trajectoryId: string): Promise<number | undefined> {
  const { rows } = await pool.query<{ n: number }>('SELECT octet_length(prompt_ids) / 4 AS n FROM trajectory_prompts WHERE trajectory_id = $1', [
    trajectoryId,
  ]);
  if (rows[0]) return rows[0].n;
  const stored = await loadStoredOutcome(pool, trajectoryId);
  if (stored === undefined) return undefined;
  if (stored.status !== 'completed') throw storedAsFailed(trajectoryId, 'tokenize its first call');
  return stored.promptLen;
}

/** A turn's verdict label: how the model answered the call. */
function replyVerdict(reply: AgentReply): string {
  if (reply.wire.malformed_tool_calls) return 'malformed_tool_call';
  return reply.finishReason;
}

/** What the turn page shows of a call: the reply the program got (its calls), and, after it, what the next call sent. */
function callInfo(turn: number, reply: AgentReply): { [key: string]: JsonValue } {
  return { call: turn, finishReason: reply.finishReason, reply: JSON.parse(JSON.stringify(reply.wire)) as JsonValue };
}

function callRecord(turn: number, reply: AgentReply, match: CallMatch): EnvironmentStepRecord {
  const observations =
    match.kind === 'extend'
      ? match.appended.map((message) => ({
          role: message.role,
          content: typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? ''),
          ...(message.tool_call_id === undefined ? {} : { tool_call_id: message.tool_call_id }),
        }))
      : [];
  const fork = match.kind === 'fork' ? { fork: JSON.parse(JSON.stringify(match.reason)) as JsonValue } : {};
  return { observations, reward: 0, success: false, done: false, info: { ...callInfo(turn, reply), ...fork } };
}
