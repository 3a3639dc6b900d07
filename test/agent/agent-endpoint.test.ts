import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { agentEndpoint, AGENT_BODY_LIMIT_BYTES, type AgentEndpointLog } from '../../src/agent/agent-endpoint.js';
import { agentKey, verifyAgentKey } from '../../src/agent/agent-key.js';
import type { ChatCompletionChunk } from '../../src/agent/chat-completion-stream.js';
import type { ChatCompletion } from '../../src/agent/chat-completion-response.js';
import { loadModelTokenizer, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import { body, OPENING } from './agent-episode.js';
import { ScriptedAgentCalls } from './scripted-agent-calls.js';

const SECRET = 'the worker secret, 32 bytes long';
/** A grouped trajectory's id, with the `/` its URL segment must encode. */
const TRAJECTORY = 'weather-group/3';
const BASE = `/v1/trajectories/${encodeURIComponent(TRAJECTORY)}`;
const CALL_PARIS =
  '<think>\nI need the weather in Paris.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
const ANSWER_PARIS = '<think>\nThe tool says 21.\n</think>\n\nIt is 21 °C in Paris.';
const PARIS_RESULT = { role: 'tool', tool_call_id: 'call_0_0', content: '{"celsius": 21}' };

describe("the agent endpoint's HTTP layer", () => {
  let tok: ModelTokenizer;
  let calls: ScriptedAgentCalls;
  let logged: { level: string; fields: Record<string, unknown>; message: string }[];
  let app: ReturnType<typeof agentEndpoint>;
  beforeAll(async () => {
    tok = await loadModelTokenizer();
  });
  beforeEach(() => {
    calls = new ScriptedAgentCalls(tok, TRAJECTORY, [CALL_PARIS, ANSWER_PARIS]);
    logged = [];
    const log: AgentEndpointLog = {
      warn: (fields, message) => logged.push({ level: 'warn', fields: fields as Record<string, unknown>, message }),
      error: (fields, message) => logged.push({ level: 'error', fields: fields as Record<string, unknown>, message }),
    };
    app = agentEndpoint({ calls, keySecret: SECRET, log });
  });

  const post = (payload: unknown, key: string | null = agentKey(SECRET, TRAJECTORY, calls.attempt), path = `${BASE}/chat/completions`) =>
    app.request(path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === null ? {} : { authorization: `Bearer ${key}` }) },
      body: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  /** Checks OpenAI's error shape and the status, and that the refusal was logged with the trajectory id. */
  async function expectError(response: Response, status: number, code: string | null, param: string | null = null): Promise<string> {
    expect(response.status).toBe(status);
    const { error } = (await response.json()) as { error: Record<string, unknown> };
    expect(Object.keys(error).sort()).toEqual(['code', 'message', 'param', 'type']);
    expect(error).toMatchObject({ type: status === 500 ? 'server_error' : 'invalid_request_error', param, code });
    expect(logged.at(-1)).toMatchObject({ level: status === 500 ? 'error' : 'warn', fields: { trajectoryId: TRAJECTORY } });
    if (status !== 500) expect(response.headers.get('x-should-retry')).toBe('false');
    return error['message'] as string;
  }

  it('answers a two-call tool conversation; the second call extends the sequence by the tool result only', async () => {
    const first = await post(body(OPENING));
    expect(first.status).toBe(200);
    const firstAnswer = (await first.json()) as ChatCompletion;
    expect(firstAnswer.choices[0].finish_reason).toBe('tool_calls');
    const sentBack = firstAnswer.choices[0].message;
    expect(sentBack.tool_calls).toEqual([{ id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }]);

    const second = await post(body([...OPENING, sentBack, PARIS_RESULT]));
    expect(second.status).toBe(200);
    const secondAnswer = (await second.json()) as ChatCompletion;
    expect(secondAnswer).toMatchObject({ id: `chatcmpl-${TRAJECTORY}-1`, model: 'policy', choices: [{ finish_reason: 'stop' }] });
    expect(secondAnswer.choices[0].message.content).toBe('It is 21 °C in Paris.');
    expect(calls.asked).toEqual([0, 1]);
    const extend = calls.matches[1]!;
    expect(extend.kind).toBe('extend');
    if (extend.kind !== 'extend') return;
    expect(tok.decodeAll(extend.newIds)).toBe(
      '\n<|im_start|>user\n<tool_response>\n{"celsius": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n',
    );
    const [sequence] = calls.ledger.sequences;
    expect(calls.ledger.sequences).toHaveLength(1);
    expect(sequence!.ids.slice(0, calls.matches[0]!.promptIds.length)).toEqual(calls.matches[0]!.promptIds);
    expect(sequence!.generated.map(({ call }) => call)).toEqual([0, 1]);
  });

  it('streams the same message a non-streamed call returns: a re-run program is answered from the store', async () => {
    const plain = (await (await post(body(OPENING))).json()) as ChatCompletion;
    calls.attempt = 1; // the program runs again, under a new key, and streams
    const streamed = await post(body(OPENING, { stream: true, stream_options: { include_usage: true } }));
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await streamed.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    const chunks = text
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)) as ChatCompletionChunk);
    // The stream opens with `content: ""`, as OpenAI's does: a client reads "" and null alike, as no content.
    const { refusal: _refusal, ...message } = plain.choices[0].message;
    const stream = assembled(chunks);
    expect({ ...stream, message: { ...stream.message, content: stream.message['content'] || null } }).toEqual({
      message,
      finish: 'tool_calls',
      usage: plain.usage,
    });
    expect(calls.asked).toEqual([0, 0]);
    expect(calls.records).toHaveLength(1);
  });

  it('lists the policy as the one model', async () => {
    const response = await app.request(`${BASE}/models`, { headers: { authorization: `Bearer ${agentKey(SECRET, TRAJECTORY, 0)}` } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ object: 'list', data: [{ id: 'qwen3-policy', object: 'model', created: 0, owned_by: 'ratchet' }] });
  });

  it('refuses a missing, foreign, forged or malformed key with a 401', async () => {
    expect(await expectError(await post(body(OPENING), null), 401, 'invalid_api_key')).toContain('no API key');
    expect(await expectError(await post(body(OPENING), agentKey(SECRET, 'weather-group/4', 0)), 401, 'invalid_api_key')).toContain(
      "another trajectory's",
    );
    const forged = agentKey('another secret', TRAJECTORY, 0);
    expect(await expectError(await post(body(OPENING), forged), 401, 'invalid_api_key')).toContain('not issued by this worker');
    expect(await expectError(await post(body(OPENING), 'sk-proj-abc'), 401, 'invalid_api_key')).toContain('not a Ratchet agent key');
    expect(calls.asked).toEqual([]);
  });

  it('verifies a key for its trajectory and run, and no other', () => {
    expect(verifyAgentKey(SECRET, agentKey(SECRET, TRAJECTORY, 7), TRAJECTORY)).toEqual({ attempt: 7 });
    const key = agentKey(SECRET, TRAJECTORY, 7);
    expect(() => verifyAgentKey(SECRET, key.replace('.7.', '.8.'), TRAJECTORY)).toThrow('not issued by this worker');
  });

  it('refuses the key of a replaced run (403) and a closed trajectory (404)', async () => {
    calls.attempt = 1;
    expect(await expectError(await post(body(OPENING), agentKey(SECRET, TRAJECTORY, 0)), 403, 'ended-run')).toContain('runs run 1 now');
    const closed = `/v1/trajectories/${encodeURIComponent('weather-group/9')}/chat/completions`;
    const response = await post(body(OPENING), agentKey(SECRET, 'weather-group/9', 0), closed);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ error: { code: 'trajectory-not-found' } });
  });

  it('refuses malformed JSON and a refused field with a 400 naming the field and its kind', async () => {
    expect(await expectError(await post('{"model": "policy", "messages": ['), 400, 'invalid-request', '(body)')).toContain('is not JSON');
    expect(await expectError(await post(body(OPENING, { temperature: 0.1 })), 400, 'sampling-mismatch', 'temperature')).toContain('temperature');
    expect(calls.asked).toEqual([]);
  });

  it('refuses with a 409 a re-run program whose call differs from the one recorded at its index', async () => {
    expect((await post(body(OPENING))).status).toBe(200);
    calls.attempt = 1;
    const changed = [OPENING[0], { role: 'user', content: 'What is the weather in Rome?' }];
    const message = await expectError(await post(body(changed)), 409, 'call-diverged');
    expect(message).toContain('the agent program made a different call at this index than in its earlier run');
  });

  it('refuses with a 409 a call made while the same run is answered, without using an index', async () => {
    let release = () => {};
    calls.hold = new Promise((resolve) => (release = resolve));
    const first = post(body(OPENING));
    await expect.poll(() => calls.asked.length).toBe(1);
    const other = [OPENING[0], { role: 'user', content: 'And in Rome?' }];
    expect(await expectError(await post(body(other)), 409, 'concurrent-call')).toContain('one at a time');
    release();
    const sentBack = ((await (await first).json()) as ChatCompletion).choices[0].message;
    expect((await post(body([...OPENING, sentBack, PARIS_RESULT]))).status).toBe(200);
    expect(calls.asked).toEqual([0, 1]);
  }, 10_000); // a second call numbered instead of refused waits on the held GPU: fail in 10 s

  it('answers the same request made again (a retry whose answer was lost) as the same call: one index, one turn', async () => {
    const first = (await (await post(body(OPENING))).json()) as ChatCompletion;
    const again = (await (await post(body(OPENING))).json()) as ChatCompletion;
    expect(again).toEqual(first);
    expect(calls.asked).toEqual([0, 0]);
    expect(calls.records).toHaveLength(1);
    expect((await post(body([...OPENING, first.choices[0].message, PARIS_RESULT]))).status).toBe(200);
    expect(calls.asked).toEqual([0, 0, 1]);
  });

  it(`refuses a body over ${AGENT_BODY_LIMIT_BYTES} bytes with a 413`, async () => {
    const huge = body([{ role: 'user', content: 'x'.repeat(AGENT_BODY_LIMIT_BYTES) }]);
    expect(await expectError(await post(huge), 413, 'request-too-large')).toContain('over 8388608 bytes');
    expect(calls.asked).toEqual([]);
  });

  it('answers an unexpected failure with a 500 that names no internals, logs it, and keeps the call index for the retry', async () => {
    calls.failure = new Error('connect ECONNREFUSED postgres://ratchet@10.0.0.7:5432');
    const message = await expectError(await post(body(OPENING)), 500, null);
    expect(message).not.toMatch(/postgres|ECONNREFUSED/);
    expect(logged.at(-1)!.fields).toMatchObject({ err: calls.failure, call: 0 });
    calls.failure = undefined;
    expect((await post(body(OPENING))).status).toBe(200);
    expect(calls.asked).toEqual([0, 0]);
  });
});

/** Chunks assembled as OpenAI clients do: content appended, tool calls by index, other delta fields set. */
function assembled(chunks: readonly ChatCompletionChunk[]): { message: Record<string, unknown>; finish: string | null; usage: unknown } {
  const message: Record<string, unknown> = {};
  const toolCalls: NonNullable<ChatCompletionChunk['choices'][0]['delta']['tool_calls']> = [];
  let finish: string | null = null;
  let usage: unknown = null;
  for (const chunk of chunks) {
    usage = chunk.usage ?? usage;
    for (const { delta, finish_reason } of chunk.choices) {
      const { content, tool_calls, ...rest } = delta;
      if (content != null) message['content'] = `${(message['content'] as string | undefined) ?? ''}${content}`;
      for (const { index, ...call } of tool_calls ?? []) toolCalls[index] = call as (typeof toolCalls)[0];
      Object.assign(message, rest);
      finish = finish_reason ?? finish;
    }
  }
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  return { message, finish, usage };
}
