import type { TrajectoryDetails } from './trajectory-details.js';
import { compactJson } from './compact-json.js';
import { attemptText } from './turn-attempt.js';
import { duration, turnTimings } from './turn-timings.js';
import { environmentReward } from './pages/observations.js';
import { agentTurn, endWords, forkSentence, type AgentTurn } from './agent-turns.js';

/** The trajectory page as plain text, for `ratchet show`: the same conversation, turn by turn. */
export function conversationText(details: TrajectoryDetails): string {
  const { view } = details;
  const lines = [
    `trajectory ${view.trajectoryId}  (${view.status}${view.qid ? `, qid ${view.qid}` : ''}${view.groupId ? `, group ${view.groupId}` : ''})`,
  ];
  if (view.environment !== null) lines.push(`environment: ${view.environment}`);
  lines.push(`Temporal: ${details.temporalStatus}`);
  if (details.agreement.verdict === 'disagree') lines.push(`Temporal and Postgres disagree: ${details.agreement.reason}`);
  if (details.temporalUrl) lines.push(`Temporal UI: ${details.temporalUrl}`);
  if (details.problem) lines.push('', 'Problem:', details.problem.problem, `Gold: ${details.problem.gold.join(' | ')}`);
  view.turns.forEach((turn, t) => {
    const answer = details.answers[t]!;
    lines.push(
      '',
      `── turn ${t + 1}: ${turn.verdict ?? 'not verified yet'} · ${turn.outputIds.length} tokens · finish ${turn.finishReason ?? '–'}` +
        ` · versions ${turn.versionStart ?? '–'}→${turn.versionEnd ?? '–'} · reward ${num(turn.rawReward)} · return ${num(turn.reward)}` +
        (turn.servedBy === null && turn.cachedTokens === null
          ? ''
          : ` · server ${turn.servedBy ?? '–'} · cached ${turn.cachedTokens ?? '–'} of ${turn.contextLen}`) +
        turnTimings(turn)
          .map(({ phase, ms }) => ` · ${phase} ${duration(ms)}`)
          .join(''),
    );
    const agent = agentTurn(turn);
    if (agent !== null) {
      lines.push(...agentTurnLines(agent, turn));
      return;
    }
    if (answer.reasoning !== null) lines.push(`[reasoning, ${answer.reasoning.length} characters]`);
    lines.push(answer.answer, `extracted answer: ${turn.extractedAnswer ?? '(none)'}`);
    if (turn.verdictDetail) lines.push(`judge: ${turn.verdictDetail}`);
    if (turn.observations !== null) {
      for (const message of turn.observations) lines.push(`[${message.role}] ${message.content}`);
      lines.push(
        `environment reward ${environmentReward(turn.environmentReward)} · done ${turn.done === null ? '–' : turn.done ? 'yes' : 'no'}` +
          (turn.info && Object.keys(turn.info).length > 0 ? ` · info ${compactJson(turn.info)}` : ''),
      );
    }
    if (turn.feedbackText !== null) lines.push(`feedback: ${turn.feedbackText.trim()}`);
    // The last turn's feedback is rendered for its verdict but never appended: the loop ended (src/trajectory/packing.ts).
    if (turn.feedbackText !== null && t === view.turns.length - 1 && (view.status === 'completed' || view.status === 'failed')) {
      lines.push('(this feedback was never appended: the trajectory ended after this turn)');
    }
  });
  if (view.generating)
    lines.push(
      '',
      `── turn ${view.generating.turn + 1}: generating (attempt ${attemptText(view.generating.attempt)}, ${view.generating.ids.length} tokens so far)`,
      details.generatingText ?? '',
    );
  lines.push('');
  if (view.status === 'failed')
    lines.push(`failed: ${view.failureType ?? 'InternalError'} (${view.failureClass ?? 'infrastructure'}): ${view.error ?? ''}`);
  else if (view.status === 'completed') lines.push(`ended: ${view.endReason} after ${view.turns.length} turns`);
  else if (details.live) lines.push(`workflow: ${details.live.phase}, turn ${details.live.turn + 1}/${details.live.turns}`);
  else lines.push(view.status === 'queued' ? 'queued: its group waits for admission' : `status: ${view.status}`);
  return `${lines.join('\n')}\n`;
}

/** An agent program's turn: the call, the reply the program got, what its next call added, a fork, how it ended. */
function agentTurnLines(agent: AgentTurn, turn: TrajectoryDetails['view']['turns'][number]): string[] {
  const lines = [`program call index ${agent.call ?? '–'} · finish reason ${agent.finishReason ?? '–'}`];
  if (agent.reasoning !== null) lines.push(`[reasoning_content, ${agent.reasoning.length} characters]`);
  lines.push(agent.content !== null && agent.content !== '' ? `content: ${agent.content}` : 'content: none');
  for (const call of agent.toolCalls) {
    lines.push(`tool call ${call.name} (tool_call_id ${call.id ?? '–'})${call.argumentsInvalid ? ', arguments not JSON' : ''}: ${call.arguments}`);
  }
  for (const m of agent.malformed) lines.push(`malformed tool call index ${m.index ?? '–'} · kind ${m.kind}: ${m.observation}`);
  for (const message of turn.observations ?? [])
    lines.push(`[${message.role}${message.toolCallId ? ` ${message.toolCallId}` : ''}] ${message.content}`);
  if (agent.end) {
    lines.push(`program ended: ${endWords(agent.end, turn.verdict)}`);
    if (agent.end.kind === 'answer') lines.push(`answer: ${agent.end.answer}`, `extracted answer: ${turn.extractedAnswer ?? '(none)'}`);
  }
  if (turn.verdictDetail) lines.push(`judge: ${turn.verdictDetail}`);
  lines.push(`environment reward ${environmentReward(turn.environmentReward)} · done ${turn.done === null ? '–' : turn.done ? 'yes' : 'no'}`);
  if (agent.fork || turn.forkIds !== undefined) lines.push(`── fork: ${forkSentence(agent.fork, turn.turn + 1)}`);
  return lines;
}

function num(value: number | null): string {
  return value === null ? '–' : value.toFixed(2);
}
