import { beforeAll, describe, expect, it } from 'vitest';
import { LedgerOrderError, matchCall, openLedger, recordTurn, type CallLedger, type CallMatch } from '../../src/agent/call-ledger.js';
import type { ChatCompletionRequest } from '../../src/agent/chat-completion-request.js';
import { generatedMask } from '../../src/agent/token-sequences.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { OPENING, output, reply, request, WEATHER_TOOLS } from './agent-episode.js';

const CALL_PARIS =
  '<think>\nI need the weather in Paris.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const ANSWER_PARIS = '<think>\nThe tool says 21.\n</think>\n\nIt is 21 °C in Paris.';
const PARIS_RESULT = { role: 'tool', tool_call_id: 'call_0_0', content: '{"celsius": 21}' };

/** Qwen3's rendering of parsed messages, as the template would write the whole conversation. */
function whole(tok: ModelTokenizer, call: ChatCompletionRequest): string {
  return tok.renderChat(call.messages, true, { tools: call.tools });
}

describe('the call ledger on the Qwen3 template', () => {
  let tok: ModelTokenizer;
  beforeAll(async () => {
    tok = await loadModelTokenizer();
  });

  /**
   * Call 0 (the opening), its turn (a call of get_weather), then call 1 with the tool's result: the program sends the
   * reply back as it received it, arguments re-serialised with other spacing, as Python's json.dumps does.
   */
  function twoCalls(): { first: CallMatch; second: CallMatch; secondRequest: ChatCompletionRequest; out0: number[] } {
    const first = matchCall(tok, openLedger(), request(OPENING));
    const out0 = output(tok, CALL_PARIS);
    const reply0 = reply(tok, out0, 0);
    const sentBack = {
      ...reply0.wire,
      tool_calls: reply0.wire.tool_calls!.map((c) => ({ ...c, function: { ...c.function, arguments: '{ "city" : "Paris" }' } })),
    };
    const secondRequest = request([...OPENING, sentBack, PARIS_RESULT]);
    const second = matchCall(tok, recordTurn(first.ledger, out0, reply0.message), secondRequest);
    return { first, second, secondRequest, out0 };
  }

  it('starts with the opening rendered by the template, tools and generation prompt included', () => {
    const call = request(OPENING);
    const first = matchCall(tok, openLedger(), call);
    expect(first.kind).toBe('start');
    expect(first.promptIds).toEqual(tok.encode(whole(tok, call)));
    expect(tok.decodeAll(first.promptIds)).toContain('<tools>\n{"type": "function", "function": {"name": "get_weather"');
    expect(first.ledger.sequences).toEqual([{ start: { kind: 'first-call', call: 0 }, ids: first.promptIds, generated: [] }]);
    expect(first.ledger.awaiting).toBe('turn');
  });

  it('extends with only the tool result, and the ids are the template rendering of the whole conversation', () => {
    const { first, second, secondRequest, out0 } = twoCalls();
    if (second.kind !== 'extend') throw new Error(`expected extend, got ${second.kind}`);
    expect(second.appended).toEqual([{ role: 'tool', tool_call_id: 'call_0_0', content: '{"celsius": 21}' }]);
    expect(tok.decodeAll(second.newIds)).toBe(
      '\n<|im_start|>user\n<tool_response>\n{"celsius": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
    expect(second.promptIds).toEqual([...first.promptIds, ...out0, ...second.newIds]);
    // Qwen3 keeps the reasoning of assistant turns after the last user query, so here the whole rendering agrees.
    expect(second.promptIds).toEqual(tok.encode(whole(tok, secondRequest)));
    const [sequence] = second.ledger.sequences;
    expect(second.ledger.sequences).toHaveLength(1);
    expect(sequence!.generated).toEqual([{ call: 0, start: first.promptIds.length, end: first.promptIds.length + out0.length }]);
  });

  it('keeps the generated thinking where the template would drop it once a new user query follows', () => {
    const { second } = twoCalls();
    const out1 = output(tok, ANSWER_PARIS);
    const reply1 = reply(tok, out1, 1);
    expect(reply1.finishReason).toBe('stop');
    const call0Reply = reply(tok, output(tok, CALL_PARIS), 0).wire;
    const third = request([...OPENING, call0Reply, PARIS_RESULT, reply1.wire, { role: 'user', content: 'And in Zürich?' }]);
    const match = matchCall(tok, recordTurn(second.ledger, out1, reply1.message), third);
    expect(match.kind).toBe('extend');
    const kept = tok.decodeAll(match.promptIds);
    const rendered = whole(tok, third);
    // The template renders turns before the last user query without their <think> blocks: re-rendering would change
    // the tokens the policy was sampled on. The ledger keeps them; that is the only difference.
    expect(kept).not.toBe(rendered);
    expect(kept).toContain('I need the weather in Paris.');
    expect(rendered).not.toContain('I need the weather in Paris.');
    expect(kept.replace(/<think>\n[\s\S]*?\n<\/think>\n\n/g, '')).toBe(rendered);
    expect(kept.endsWith('<|im_start|>user\nAnd in Zürich?<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
    // Both generated turns stay marked as trained-on tokens, exactly where they were sampled.
    const [sequence] = match.ledger.sequences;
    const mask = generatedMask(sequence!);
    expect(mask.filter((bit) => bit === 1)).toHaveLength(output(tok, CALL_PARIS).length + out1.length);
    expect(tok.decodeAll(sequence!.ids.filter((_, i) => mask[i] === 1))).toBe(`${CALL_PARIS}<|im_end|>${ANSWER_PARIS}<|im_end|>`);
  });

  it("keeps a call written with other spacing than the template's, where re-rendering would respace it", () => {
    const first = matchCall(tok, openLedger(), request(OPENING));
    const compact = output(tok, '<tool_call>\n{"name":"get_weather","arguments":{"city":"Paris"}}\n</tool_call>');
    const compactReply = reply(tok, compact, 0);
    const call = request([...OPENING, compactReply.wire, PARIS_RESULT]);
    const next = matchCall(tok, recordTurn(first.ledger, compact, compactReply.message), call);
    expect(next.kind).toBe('extend');
    expect(next.promptIds).toEqual([...first.promptIds, ...compact, ...(next.kind === 'extend' ? next.newIds : [])]);
    expect(tok.decodeAll(next.promptIds)).toContain('{"name":"get_weather","arguments":{"city":"Paris"}}');
    expect(whole(tok, call)).toContain('{"name": "get_weather", "arguments": {"city": "Paris"}}');
  });

  it('ends a turn cut off by the length limit with the end-of-turn token before what follows', () => {
    const first = matchCall(tok, openLedger(), request(OPENING));
    const cut = output(tok, '<think>\nParis is in France, so I', false);
    const cutReply = reply(tok, cut, 0);
    expect(cutReply.finishReason).toBe('length');
    const next = matchCall(
      tok,
      recordTurn(first.ledger, cut, cutReply.message),
      request([...OPENING, cutReply.wire, { role: 'user', content: 'Go on.' }]),
    );
    if (next.kind !== 'extend') throw new Error(`expected extend, got ${next.kind}`);
    expect(tok.decodeAll(next.newIds)).toBe('<|im_end|>\n<|im_start|>user\nGo on.<|im_end|>\n<|im_start|>assistant\n');
    expect(next.promptIds).toEqual([...first.promptIds, ...cut, ...next.newIds]);
  });

  it('leaves the ledger it was given as it was', () => {
    const ledger = openLedger();
    const frozen = JSON.stringify(ledger);
    const first = matchCall(tok, ledger, request(OPENING));
    expect(JSON.stringify(ledger)).toBe(frozen);
    const afterStart = JSON.stringify(first.ledger);
    recordTurn(first.ledger, output(tok, CALL_PARIS), reply(tok, output(tok, CALL_PARIS), 0).message);
    expect(JSON.stringify(first.ledger)).toBe(afterStart);
  });

  it('refuses a call before the last turn is recorded, and a turn with no call waiting', () => {
    const first = matchCall(tok, openLedger(), request(OPENING));
    expect(() => matchCall(tok, first.ledger, request(OPENING))).toThrow(LedgerOrderError);
    expect(() => recordTurn(openLedger(), [1, 2], { role: 'assistant', content: 'x' })).toThrow(LedgerOrderError);
  });
});

describe('forks: a rewritten history starts a new sequence, with the reason', () => {
  let tok: ModelTokenizer;
  let afterTurn0: CallLedger;
  let reply0: ReturnType<typeof reply>;
  let out0: number[];
  beforeAll(async () => {
    tok = await loadModelTokenizer();
    const first = matchCall(tok, openLedger(), request(OPENING));
    out0 = output(tok, CALL_PARIS);
    reply0 = reply(tok, out0, 0);
    afterTurn0 = recordTurn(first.ledger, out0, reply0.message);
  });

  /** Matches a call after turn 0, checks it forked as rendered from scratch, and that sequence 0 kept its tokens. */
  function fork(messages: unknown[], extra: Record<string, unknown> = {}): CallMatch & { kind: 'fork' } {
    const call = request(messages, extra);
    const match = matchCall(tok, afterTurn0, call);
    if (match.kind !== 'fork') throw new Error(`expected a fork, got ${match.kind}`);
    expect(match.promptIds).toEqual(tok.encode(tok.renderChat(call.messages, true, call.tools.length > 0 ? { tools: call.tools } : {})));
    expect(match.ledger.sequences).toHaveLength(2);
    expect(match.ledger.sequences[0]).toEqual(afterTurn0.sequences[0]);
    expect(generatedMask(match.ledger.sequences[0]!).filter((bit) => bit === 1)).toHaveLength(out0.length);
    expect(match.ledger.sequences[1]).toEqual({ start: { kind: 'fork', call: 1, reason: match.reason }, ids: match.promptIds, generated: [] });
    return match;
  }

  it('changed-tools: the tools offered changed', () => {
    expect(fork([...OPENING, reply0.wire, PARIS_RESULT], { tools: WEATHER_TOOLS.slice(0, 1) }).reason).toEqual({ kind: 'changed-tools' });
  });

  it('dropped-reasoning: the reply came back without its reasoning', () => {
    const { reasoning_content: _dropped, ...withoutReasoning } = reply0.wire;
    expect(fork([...OPENING, withoutReasoning, PARIS_RESULT]).reason).toEqual({ kind: 'dropped-reasoning', index: 2 });
  });

  it('rewrote-message: a changed system prompt, or a reply whose call was edited', () => {
    const system = { role: 'system', content: 'You are a terse assistant.' };
    expect(fork([system, OPENING[1], reply0.wire, PARIS_RESULT]).reason).toEqual({
      kind: 'rewrote-message',
      index: 0,
      role: 'system',
      field: 'content',
    });
    const edited = {
      ...reply0.wire,
      tool_calls: [{ ...reply0.wire.tool_calls![0]!, function: { name: 'get_weather', arguments: '{"city": "Lyon"}' } }],
    };
    expect(fork([...OPENING, edited, PARIS_RESULT]).reason).toEqual({ kind: 'rewrote-message', index: 2, role: 'assistant', field: 'tool_calls' });
    expect(fork([...OPENING, { ...reply0.wire, content: 'Let me check.' }, PARIS_RESULT]).reason).toMatchObject({ index: 2, field: 'content' });
  });

  it('dropped-messages: the same call made again without the reply, or earlier messages cut out', () => {
    expect(fork([...OPENING]).reason).toEqual({ kind: 'dropped-messages', index: 2, count: 1 });
    expect(fork([OPENING[0], reply0.wire, PARIS_RESULT]).reason).toEqual({ kind: 'dropped-messages', index: 1, count: 1 });
  });

  it('inserted-messages: a message put before the recorded ones', () => {
    const note = { role: 'user', content: 'Answer in Celsius.' };
    expect(fork([OPENING[0], note, OPENING[1], reply0.wire, PARIS_RESULT]).reason).toEqual({ kind: 'inserted-messages', index: 1, count: 1 });
  });

  it('goes on extending the new sequence after a fork, and keeps the old one for export', () => {
    const summary = [OPENING[0], { role: 'user', content: 'Paris is 21 °C. What about Zürich?' }];
    const forked = fork(summary);
    const out1 = output(tok, '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>');
    const reply1 = reply(tok, out1, 1);
    const next = matchCall(
      tok,
      recordTurn(forked.ledger, out1, reply1.message),
      request([...summary, reply1.wire, { role: 'tool', tool_call_id: 'call_1_0', content: '18' }]),
    );
    expect(next.kind).toBe('extend');
    const [old, current] = next.ledger.sequences;
    expect(old).toEqual(afterTurn0.sequences[0]);
    expect(current!.generated).toEqual([{ call: 1, start: forked.promptIds.length, end: forked.promptIds.length + out1.length }]);
    expect(next.promptIds).toEqual(current!.ids);
    expect(next.ledger.calls).toBe(3);
  });
});
