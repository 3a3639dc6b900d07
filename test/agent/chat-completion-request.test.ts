import { describe, expect, it } from 'vitest';
import { AgentRequestError, type AgentRequestProblem } from '../../src/agent/agent-request-error.js';
import { parseChatCompletionRequest } from '../../src/agent/chat-completion-request.js';
import { body, OPENING, TERMS } from './agent-episode.js';

/** The refusal a body gets, as kind and field (and the message, to read the reason). */
function refusal(request: unknown, terms = TERMS): { kind: AgentRequestProblem; field: string; message: string } {
  try {
    parseChatCompletionRequest(request, terms);
  } catch (error) {
    if (!(error instanceof AgentRequestError)) throw error;
    return { kind: error.kind, field: error.field, message: error.message };
  }
  throw new Error('the request was accepted');
}

describe("reading an agent program's chat completions request", () => {
  it('reads messages by meaning: text parts joined, developer as system, null content, arguments as values', () => {
    const request = parseChatCompletionRequest(
      body([
        {
          role: 'developer',
          content: [
            { type: 'text', text: 'Be careful.' },
            { type: 'text', text: 'Be brief.' },
          ],
        },
        { role: 'user', content: 'Weather in Paris?', name: 'ada' },
        {
          role: 'assistant',
          content: null,
          refusal: null,
          reasoning_content: 'I should call the tool.',
          tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }],
        },
        { role: 'tool', tool_call_id: 'call_0_0', content: [{ type: 'text', text: '21' }] },
        { role: 'assistant', content: 'It is 21.', reasoning: 'vLLM spells it reasoning' },
      ]),
      TERMS,
    );
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be careful.\nBe brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'I should call the tool.',
        tool_calls: [{ id: 'call_0_0', type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris' } } }],
      },
      { role: 'tool', tool_call_id: 'call_0_0', content: '21' },
      { role: 'assistant', content: 'It is 21.', reasoning_content: 'vLLM spells it reasoning' },
    ]);
    expect(request.tools.map((tool) => tool.function.name)).toEqual(['get_weather', 'add']);
    expect(request).toMatchObject({ model: 'policy', stream: false, streamUsage: false, logprobs: false, maxTokens: TERMS.maxNewTokens });
  });

  it('honours stream, usage in the stream, logprobs and a smaller length limit', () => {
    const request = parseChatCompletionRequest(
      body(OPENING, { stream: true, stream_options: { include_usage: true }, logprobs: true, top_logprobs: 0, max_completion_tokens: 64 }),
      TERMS,
    );
    expect(request).toMatchObject({ stream: true, streamUsage: true, logprobs: true, maxTokens: 64 });
    expect(parseChatCompletionRequest(body(OPENING, { max_tokens: 32 }), TERMS).maxTokens).toBe(32);
  });

  it("accepts the no-op forms of refused features, sampling equal to the trajectory's, and ignores the seed and bookkeeping", () => {
    const noOps = {
      n: 1,
      tool_choice: 'auto',
      parallel_tool_calls: true,
      stop: [],
      logit_bias: {},
      response_format: { type: 'text' },
      presence_penalty: 0,
      frequency_penalty: 0,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      min_p: 0,
      repetition_penalty: 1,
      seed: 7,
      user: 'ada',
      store: false,
      metadata: { run: 'x' },
      modalities: ['text'],
      audio: null,
    };
    expect(parseChatCompletionRequest(body(OPENING, noOps), TERMS).messages).toHaveLength(2);
    // Nulls are absent fields, as some clients send them.
    expect(parseChatCompletionRequest(body(OPENING, { temperature: null, tools: null, stop: null }), TERMS).tools).toEqual([]);
  });

  it("ignores prompt caching's settings, as the OpenAI Python SDK sends them: they cannot change the sampling", () => {
    const caching = { prompt_cache_key: 'agent', prompt_cache_retention: '24h', prompt_cache_options: { mode: 'explicit', ttl: '1h' } };
    expect(parseChatCompletionRequest(body(OPENING, caching), TERMS).messages).toHaveLength(2);
    // A field nobody listed is still refused, not dropped.
    expect(refusal(body(OPENING, { moderation: { input: true } }))).toMatchObject({ kind: 'unknown-field', field: 'moderation' });
  });

  it("refuses sampling that differs from the trajectory's, naming the field and the trajectory's value", () => {
    expect(refusal(body(OPENING, { temperature: 0.7 }))).toMatchObject({ kind: 'sampling-mismatch', field: 'temperature' });
    expect(refusal(body(OPENING, { temperature: 0.7 })).message).toContain('samples at temperature 1');
    expect(refusal(body(OPENING, { top_p: 0.95 }))).toMatchObject({ kind: 'sampling-mismatch', field: 'top_p' });
    expect(refusal(body(OPENING, { top_k: 20 }))).toMatchObject({ kind: 'sampling-mismatch', field: 'top_k' });
    expect(refusal(body(OPENING, { frequency_penalty: 0.5 }))).toMatchObject({ kind: 'sampling-mismatch', field: 'frequency_penalty' });
    const greedy = { ...TERMS, sampling: { ...TERMS.sampling, temperature: 0 } };
    expect(() => parseChatCompletionRequest(body(OPENING, { temperature: 0 }), greedy)).not.toThrow();
    expect(refusal(body(OPENING, { temperature: 1 }), greedy)).toMatchObject({ kind: 'sampling-mismatch', field: 'temperature' });
  });

  it("refuses what a token-exact turn under the run's sampling cannot give, saying why", () => {
    const cases: [Record<string, unknown>, string, RegExp][] = [
      [{ n: 2 }, 'n', /one call is one turn/],
      [{ tool_choice: 'required' }, 'tool_choice', /constrained decoding/],
      [{ tool_choice: 'none' }, 'tool_choice', /constrained decoding/],
      [{ tool_choice: { type: 'function', function: { name: 'add' } } }, 'tool_choice', /constrained decoding/],
      [{ parallel_tool_calls: false }, 'parallel_tool_calls', /constrained decoding/],
      [{ top_logprobs: 5 }, 'top_logprobs', /sampled token/],
      [{ stop: ['\n'] }, 'stop', /end-of-turn/],
      [{ stop: 'END' }, 'stop', /end-of-turn/],
      [{ response_format: { type: 'json_object' } }, 'response_format', /constrained decoding/],
      [{ logit_bias: { '42': 5 } }, 'logit_bias', /changes the distribution/],
      [{ reasoning_effort: 'low' }, 'reasoning_effort', /template's variables/],
      [{ functions: [{ name: 'f' }] }, 'functions', /declare tools/],
      [{ audio: { voice: 'alloy' } }, 'audio', /text/],
      [{ modalities: ['text', 'audio'] }, 'modalities', /text/],
      [{ tools: [{ type: 'custom', custom: { name: 'grep' } }] }, 'tools', /only function tools/],
    ];
    for (const [extra, field, why] of cases) {
      const refused = refusal(body(OPENING, extra));
      expect(refused, JSON.stringify(extra)).toMatchObject({ kind: 'unsupported-field', field });
      expect(refused.message).toMatch(why);
    }
  });

  it('refuses a field it does not know rather than dropping it', () => {
    expect(refusal(body(OPENING, { typical_p: 0.9 }))).toMatchObject({ kind: 'unknown-field', field: 'typical_p' });
  });

  it('refuses content other than text, naming the part', () => {
    const image = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image_url', image_url: { url: 'data:' } },
      ],
    };
    expect(refusal(body([OPENING[0], image]))).toMatchObject({ kind: 'unsupported-content', field: 'messages[1].content[1].type' });
  });

  it("refuses more new tokens than the trajectory's budget, and two limits that disagree", () => {
    expect(refusal(body(OPENING, { max_completion_tokens: 4096 }))).toMatchObject({ kind: 'over-budget', field: 'max_completion_tokens' });
    expect(refusal(body(OPENING, { max_tokens: 4096 })).message).toContain('at most 256');
    expect(refusal(body(OPENING, { max_tokens: 10, max_completion_tokens: 20 }))).toMatchObject({ kind: 'invalid-request', field: 'max_tokens' });
  });

  it('refuses tool calls whose arguments are not a JSON object, and tools that cannot be offered', () => {
    const call = (args: string) => ({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'add', arguments: args } }],
    });
    expect(refusal(body([...OPENING, call('{"a": 1')]))).toMatchObject({
      kind: 'invalid-tool-arguments',
      field: 'messages[2].tool_calls[0].function.arguments',
    });
    expect(refusal(body([...OPENING, call('[1, 2]')]))).toMatchObject({
      kind: 'invalid-tool-arguments',
      field: 'messages[2].tool_calls[0].function.arguments',
    });
    const twice = [
      { type: 'function', function: { name: 'add' } },
      { type: 'function', function: { name: 'add' } },
    ];
    expect(refusal(body(OPENING, { tools: twice }))).toMatchObject({ kind: 'invalid-tools', field: 'tools' });
  });

  it('refuses what is not a chat completions request, naming the field', () => {
    expect(refusal('hello')).toMatchObject({ kind: 'invalid-request', field: '(body)' });
    expect(refusal({ model: 'policy', messages: [] })).toMatchObject({ kind: 'invalid-request', field: 'messages' });
    expect(refusal({ messages: OPENING })).toMatchObject({ kind: 'invalid-request', field: 'model', message: 'model: is required' });
    expect(refusal(body(OPENING, { temperature: 'hot' }))).toMatchObject({
      kind: 'invalid-request',
      field: 'temperature',
      message: 'temperature: expected number, got string',
    });
    expect(refusal(body([{ role: 'tool', content: '21' }]))).toMatchObject({ kind: 'invalid-request', field: 'messages[0].tool_call_id' });
    expect(refusal(body([{ role: 'critic', content: 'no' }]))).toMatchObject({ kind: 'invalid-request', field: 'messages[0].role' });
    expect(refusal(body([{ role: 'function', name: 'f', content: '1' }]))).toMatchObject({ kind: 'unsupported-field', field: 'messages[0].role' });
  });
});
