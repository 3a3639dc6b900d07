import type { AgentCalls, OpenAgentTrajectory } from '../../src/agent/agent-endpoint.js';
import { matchCall, openLedger, recordTurn, type CallLedger, type CallMatch } from '../../src/agent/call-ledger.js';
import { answerFromStore, type CallRecord } from '../../src/agent/call-record.js';
import type { ChatCompletionRequest } from '../../src/agent/chat-completion-request.js';
import { agentReply, chatCompletion, type ChatCompletion, type GeneratedTurn } from '../../src/agent/chat-completion-response.js';
import { requestHash } from '../../src/agent/request-hash.js';
import type { ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { toolCallFormatOf } from '../../src/tokens/tool-call-formats.js';
import { toolSet } from '../../src/tokens/tool-definitions.js';
import { output, TERMS } from './agent-episode.js';

/**
 * One trajectory's calls answered in memory from the real pieces (ledger, call store, replies), with a scripted "GPU":
 * the turn for call n is script[n], encoded by the tokenizer and ended with EOS. `hold` keeps the GPU busy until
 * released, for a call that arrives while another is answered.
 */
export class ScriptedAgentCalls implements AgentCalls {
  ledger: CallLedger = openLedger();
  readonly records: CallRecord[] = [];
  readonly matches: CallMatch[] = [];
  /** The program run the trajectory is open for: a re-run is a new attempt. */
  attempt = 0;
  /** Calls answered, by index, in the order they were asked (replays included). */
  readonly asked: number[] = [];
  hold: Promise<void> | undefined;
  failure: Error | undefined;

  constructor(
    private readonly tok: ModelTokenizer,
    readonly trajectoryId: string,
    private readonly script: readonly string[],
  ) {}

  async terms(trajectoryId: string): Promise<OpenAgentTrajectory | undefined> {
    return trajectoryId === this.trajectoryId ? { ...TERMS, policy: 'qwen3-policy', attempt: this.attempt } : undefined;
  }

  async call(trajectoryId: string, call: number, request: ChatCompletionRequest): Promise<{ completion: ChatCompletion }> {
    this.asked.push(call);
    if (this.failure) throw this.failure;
    const sent = { requestHash: requestHash(request), messageCount: request.messages.length };
    const tools = toolSet(request.tools);
    const answer = answerFromStore(this.records, call, sent);
    let turn: GeneratedTurn;
    if (answer.kind === 'replay') turn = answer.record.turn;
    else {
      const match = matchCall(this.tok, this.ledger, request);
      await this.hold;
      const outputIds = output(this.tok, this.script[call]!);
      turn = { outputIds, logprobs: outputIds.map((_, i) => -0.01 * (i + 1)), promptTokens: match.promptIds.length, created: 1_765_000_000 };
      const { message } = agentReply(this.tok, toolCallFormatOf(this.tok), tools, outputIds, call);
      this.matches.push(match);
      this.ledger = recordTurn(match.ledger, outputIds, message);
      this.records.push({ call, ...sent, turn });
    }
    const reply = agentReply(this.tok, toolCallFormatOf(this.tok), tools, turn.outputIds, call);
    const id = `chatcmpl-${trajectoryId}-${call}`;
    return { completion: chatCompletion(this.tok, reply, turn, { id, model: request.model, logprobs: request.logprobs }) };
  }
}
