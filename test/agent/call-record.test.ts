import { describe, expect, it } from 'vitest';
import { answerFromStore, CallDivergedError, CallOutOfOrderError, type CallRecord } from '../../src/agent/call-record.js';
import { requestHash } from '../../src/agent/request-hash.js';
import { OPENING, request } from './agent-episode.js';

const CALLED = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } }],
};
const RESULT = { role: 'tool', tool_call_id: 'call_0_0', content: '5' };

function record(call: number, messages: unknown[]): CallRecord {
  return {
    call,
    requestHash: requestHash(request(messages)),
    messageCount: messages.length,
    turn: { outputIds: [1, 2], logprobs: [-1, -2], promptTokens: 10, created: 1 },
  };
}

describe('the request hash', () => {
  const hash = (messages: unknown[], extra: Record<string, unknown> = {}) => requestHash(request(messages, extra));

  it('is the same for the same request spelled otherwise: re-serialised arguments, text parts, stream and logprobs', () => {
    const base = hash([...OPENING, CALLED, RESULT]);
    expect(base).toMatch(/^[0-9a-f]{64}$/);
    const respaced = { ...CALLED, tool_calls: [{ ...CALLED.tool_calls[0]!, function: { name: 'add', arguments: '{ "b": 3, "a": 2 }' } }] };
    expect(hash([...OPENING, respaced, RESULT])).toBe(base);
    expect(hash([...OPENING, { ...CALLED, content: '' }, { ...RESULT, content: [{ type: 'text', text: '5' }] }])).toBe(base);
    expect(
      hash([...OPENING, CALLED, RESULT], { stream: true, stream_options: { include_usage: true }, logprobs: true, model: 'other', seed: 3 }),
    ).toBe(base);
  });

  it('differs when what the policy is asked for differs: a message, the tools, the length limit', () => {
    const base = hash([...OPENING, CALLED, RESULT]);
    expect(hash([...OPENING, CALLED, { ...RESULT, content: '6' }])).not.toBe(base);
    expect(hash([...OPENING, CALLED, RESULT], { tools: [] })).not.toBe(base);
    expect(hash([...OPENING, CALLED, RESULT], { max_tokens: 100 })).not.toBe(base);
  });
});

describe('answering a re-run program from the calls it made', () => {
  const records = [record(0, OPENING), record(1, [...OPENING, CALLED, RESULT])];

  it('replays a recorded call made again, without generating', () => {
    const sent = { requestHash: requestHash(request([...OPENING, CALLED, RESULT])), messageCount: 4 };
    expect(answerFromStore(records, 1, sent)).toEqual({ kind: 'replay', record: records[1] });
  });

  it('generates the first call past the recorded ones', () => {
    const sent = { requestHash: requestHash(request(OPENING)), messageCount: 2 };
    expect(answerFromStore(records, 2, sent)).toEqual({ kind: 'generate' });
    expect(answerFromStore([], 0, sent)).toEqual({ kind: 'generate' });
  });

  it('fails with CallDivergedError when the call at a recorded index asks for something else', () => {
    const sent = { requestHash: requestHash(request([...OPENING, CALLED, { ...RESULT, content: '6' }])), messageCount: 4 };
    let thrown: unknown;
    try {
      answerFromStore(records, 1, sent);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CallDivergedError);
    expect(thrown).toMatchObject({ name: 'CallDivergedError', call: 1, recorded: { requestHash: records[1]!.requestHash, messageCount: 4 }, sent });
    expect((thrown as Error).message).toContain('call 1 differs from the call recorded at that index');
  });

  it('fails with CallOutOfOrderError for an index past the next one', () => {
    expect(() => answerFromStore(records, 3, { requestHash: 'x', messageCount: 1 })).toThrow(CallOutOfOrderError);
    expect(() => answerFromStore(records, 3, { requestHash: 'x', messageCount: 1 })).toThrow('only 2 calls are recorded');
  });
});
