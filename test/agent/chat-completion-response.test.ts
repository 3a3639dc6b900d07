import { beforeAll, describe, expect, it } from 'vitest';
import { chatCompletionChunks, serverSentEvents, type ChatCompletionChunk } from '../../src/agent/chat-completion-stream.js';
import { chatCompletion, type ChatCompletion, type GeneratedTurn } from '../../src/agent/chat-completion-response.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { OPENING, output, reply, request } from './agent-episode.js';

const TWO_CALLS =
  '<think>\nBoth cities.\n</think>\n\nLet me look.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
  '<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>';
const BAD_JSON = '<think>\nOne call.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": }\n</tool_call>';

/** The turn as stored, with made-up logprobs (one per id) and a fixed clock. */
function turn(ids: number[]): GeneratedTurn {
  return { outputIds: ids, logprobs: ids.map((_, i) => -0.01 * (i + 1)), promptTokens: 100, created: 1_765_000_000 };
}

/**
 * Assembles chunks as OpenAI clients do (the openai npm package is not installed here, so this follows its
 * accumulator): content appended, each tool call by its index with its arguments appended, logprobs appended, other
 * delta fields set, the finish reason and usage taken.
 */
function assemble(chunks: readonly ChatCompletionChunk[]): {
  message: Record<string, unknown>;
  finish: string | null;
  logprobs: unknown[];
  usage: unknown;
} {
  const message: Record<string, unknown> = {};
  const calls: { id: string; type: string; function: { name: string; arguments: string } }[] = [];
  const logprobs: unknown[] = [];
  let finish: string | null = null;
  let usage: unknown = null;
  for (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      const { content, tool_calls: deltaCalls, ...rest } = choice.delta;
      if (content != null) message['content'] = `${(message['content'] as string | undefined) ?? ''}${content}`;
      for (const call of deltaCalls ?? []) {
        const known = calls[call.index];
        if (known) known.function.arguments += call.function.arguments;
        else calls[call.index] = { id: call.id, type: call.type, function: { ...call.function } };
      }
      Object.assign(message, rest);
      logprobs.push(...(choice.logprobs?.content ?? []));
      finish = choice.finish_reason ?? finish;
    }
  }
  if (calls.length > 0) message['tool_calls'] = calls;
  return { message, finish, logprobs, usage };
}

describe("answering an agent's call from its generated turn", () => {
  let tok: ModelTokenizer;
  beforeAll(async () => {
    tok = await loadModelTokenizer();
  });

  it('returns well-formed calls with stable ids, arguments as JSON strings, and finish reason tool_calls', () => {
    const answer = reply(tok, output(tok, TWO_CALLS), 3);
    expect(answer.finishReason).toBe('tool_calls');
    expect(answer.wire).toEqual({
      role: 'assistant',
      content: 'Let me look.',
      refusal: null,
      reasoning_content: 'Both cities.',
      tool_calls: [
        { id: 'call_3_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        { id: 'call_3_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
      ],
    });
    expect(reply(tok, output(tok, TWO_CALLS), 3)).toEqual(answer);
  });

  it('gives null content beside calls, and stop for a plain answer', () => {
    const onlyCall = reply(tok, output(tok, '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 1}}\n</tool_call>'), 0);
    expect(onlyCall.wire.content).toBeNull();
    expect(onlyCall.message.content).toBe('');
    const plain = reply(tok, output(tok, '<think>\nEasy.\n</think>\n\nIt is 21 °C.'), 0);
    expect(plain).toMatchObject({ finishReason: 'stop', wire: { content: 'It is 21 °C.', reasoning_content: 'Easy.' } });
    expect(plain.wire.tool_calls).toBeUndefined();
  });

  it('says length for a turn the limit cut, even when its calls were complete', () => {
    const cut = output(tok, '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": 1}}\n</tool_call>\nNow I', false);
    expect(reply(tok, cut, 0)).toMatchObject({ finishReason: 'length', wire: { tool_calls: [{ id: 'call_0_0' }] } });
    expect(reply(tok, output(tok, '<think>\nHmm, Paris', false), 0)).toMatchObject({
      finishReason: 'length',
      wire: { content: '', reasoning_content: 'Hmm, Paris' },
    });
  });

  it('returns a turn with a malformed call as its text, with no calls, and says what was wrong', () => {
    const bad = reply(tok, output(tok, BAD_JSON), 1);
    expect(bad.finishReason).toBe('stop');
    expect(bad.wire.tool_calls).toBeUndefined();
    expect(bad.wire.content).toBe('<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": }\n</tool_call>');
    expect(bad.wire.malformed_tool_calls).toEqual([
      { index: 0, kind: 'invalid-json', observation: expect.stringMatching(/^Error: the tool call is not valid JSON/) },
    ]);
    expect(bad.message).toEqual({ role: 'assistant', content: bad.wire.content, reasoning_content: 'One call.' });
    // A well-formed call beside a malformed one is not run either: the program sees the text as written.
    const mixed = reply(tok, output(tok, `${TWO_CALLS}\n<tool_call>\n{"name": "search", "arguments": {}}\n</tool_call>`), 2);
    expect(mixed.wire.tool_calls).toBeUndefined();
    expect(mixed.wire.content).toContain('"name": "get_weather"');
    expect(mixed.wire.malformed_tool_calls).toMatchObject([{ index: 2, kind: 'unknown-tool' }]);
    const cutInCall = reply(tok, output(tok, '<tool_call>\n{"name": "add", "argu', false), 0);
    expect(cutInCall).toMatchObject({ finishReason: 'length', wire: { malformed_tool_calls: [{ kind: 'unterminated' }] } });
  });

  it('reads back, sent by the program, as the very message the ledger expects', () => {
    for (const text of [TWO_CALLS, BAD_JSON, 'Just text.']) {
      const answer = reply(tok, output(tok, text), 4);
      const [, , sentBack] = request([...OPENING, answer.wire]).messages;
      expect(sentBack).toEqual(answer.message);
    }
  });

  it('builds the OpenAI response: usage, logprobs one per generated token, EOS included', () => {
    const ids = output(tok, TWO_CALLS);
    const stored = turn(ids);
    const completion = chatCompletion(tok, reply(tok, ids, 0), stored, { id: 'chatcmpl-t1-0', model: 'policy', logprobs: true });
    expect(completion).toMatchObject({ id: 'chatcmpl-t1-0', object: 'chat.completion', created: 1_765_000_000, model: 'policy' });
    expect(completion.usage).toEqual({ prompt_tokens: 100, completion_tokens: ids.length, total_tokens: 100 + ids.length });
    const logprobs = completion.choices[0].logprobs!.content;
    expect(logprobs.map((entry) => entry.logprob)).toEqual(stored.logprobs);
    expect(logprobs.map((entry) => entry.token).join('')).toBe(`${TWO_CALLS}<|im_end|>`);
    expect(logprobs[0]!.bytes).toEqual([...new TextEncoder().encode(logprobs[0]!.token)]);
    expect(chatCompletion(tok, reply(tok, ids, 0), stored, { id: 'x', model: 'policy', logprobs: false }).choices[0].logprobs).toBeNull();
  });

  it('gives no bytes for a token that is part of a character', () => {
    const ids = output(tok, '𝔘');
    const entries = chatCompletion(tok, reply(tok, ids, 0), turn(ids), { id: 'x', model: 'p', logprobs: true }).choices[0].logprobs!.content;
    expect(ids.length).toBeGreaterThan(2);
    expect(entries[0]!.bytes).toBeNull();
  });

  describe('streamed', () => {
    function both(text: string, eos = true): { completion: ChatCompletion; chunks: ChatCompletionChunk[] } {
      const ids = output(tok, text, eos);
      const completion = chatCompletion(tok, reply(tok, ids, 0), turn(ids), { id: 'chatcmpl-s', model: 'policy', logprobs: true });
      return { completion, chunks: chatCompletionChunks(completion, { includeUsage: true }) };
    }

    it('assembles into the same message, finish reason, logprobs and usage as the response', () => {
      for (const [text, eos] of [
        [TWO_CALLS, true],
        [BAD_JSON, true],
        ['<think>\nEasy.\n</think>\n\nIt is 21 °C.', true],
        ['<think>\nHmm', false],
      ] as const) {
        const { completion, chunks } = both(text, eos);
        const assembled = assemble(chunks);
        const { refusal: _refusal, ...expected } = completion.choices[0].message;
        expect({ ...assembled.message, content: assembled.message['content'] ?? null }, text).toEqual({ ...expected, role: 'assistant' });
        expect(assembled.finish).toBe(completion.choices[0].finish_reason);
        expect(assembled.logprobs).toEqual(completion.choices[0].logprobs!.content);
        expect(assembled.usage).toEqual(completion.usage);
      }
    });

    it('ends with a usage chunk without choices only when asked, every chunk naming the response', () => {
      const { completion, chunks } = both(TWO_CALLS);
      expect(chunks.at(-1)).toMatchObject({ choices: [], usage: completion.usage });
      expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
      expect(
        chunks.every((chunk) => chunk.id === 'chatcmpl-s' && chunk.object === 'chat.completion.chunk' && chunk.created === completion.created),
      ).toBe(true);
      const plain = chatCompletionChunks(completion, { includeUsage: false });
      expect(plain.every((chunk) => !('usage' in chunk))).toBe(true);
      expect(plain.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
    });

    it('writes server-sent events ending in [DONE], each one chunk', () => {
      const { chunks } = both(TWO_CALLS);
      const events = serverSentEvents(chunks)
        .split('\n\n')
        .filter((event) => event !== '');
      expect(events.at(-1)).toBe('data: [DONE]');
      expect(events.slice(0, -1).map((event) => JSON.parse(event.replace(/^data: /, '')) as unknown)).toEqual(chunks);
    });
  });
});
