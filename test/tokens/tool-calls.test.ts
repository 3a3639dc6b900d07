import { beforeAll, describe, expect, it } from 'vitest';
import { hermesToolCalls } from '../../src/tokens/hermes-tool-calls.js';
import { llama3JsonToolCalls } from '../../src/tokens/llama3-tool-calls.js';
import { loadModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import type { ToolCallFormat } from '../../src/tokens/tool-call-format.js';
import {
  registeredToolCallFormats,
  registerToolCallFormat,
  toolCallFormatForTemplate,
  toolCallFormatOf,
  UnknownToolCallFormatError,
} from '../../src/tokens/tool-call-formats.js';
import { parseToolCallTurn } from '../../src/tokens/tool-call-turn.js';
import { functionTool, ToolDefinitionError, toolSet } from '../../src/tokens/tool-definitions.js';
import { LLAMA_31_TEMPLATE, LLAMA_32_TEMPLATE } from './fixtures/llama3-tokenizer.js';

const TOOLS = toolSet([
  functionTool(
    'get_weather',
    {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city'],
      additionalProperties: false,
    },
    'Current weather in a city',
  ),
  functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
  functionTool('now', { type: 'object', properties: {} }),
]);

const hermes = (text: string) => parseToolCallTurn(hermesToolCalls, TOOLS, text);
const llama = (text: string) => parseToolCallTurn(llama3JsonToolCalls, TOOLS, text);

describe('Hermes / Qwen3 tool calls', () => {
  it('reads several calls after the reasoning, with the content around them', () => {
    const turn = hermes(
      '<think>\nI need the weather twice.\n</think>\n\nLet me check.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome", "unit": "celsius"}}\n</tool_call>',
    );
    expect(turn).toEqual({
      family: 'hermes',
      content: 'Let me check.',
      reasoning: 'I need the weather twice.',
      toolCalls: [
        { id: 'call_0', index: 0, name: 'get_weather', arguments: { city: 'Paris' } },
        { id: 'call_1', index: 1, name: 'get_weather', arguments: { city: 'Rome', unit: 'celsius' } },
      ],
      malformed: [],
    });
  });

  it('reads a turn without calls as content, and a call written while thinking as thinking', () => {
    expect(hermes('The answer is 4.')).toEqual({ family: 'hermes', content: 'The answer is 4.', toolCalls: [], malformed: [] });
    const thinking = hermes('<think>\nmaybe <tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>\n</think>\n\nIt is late.');
    expect(thinking.toolCalls).toEqual([]);
    expect(thinking.content).toBe('It is late.');
    expect(thinking.reasoning).toContain('<tool_call>');
  });

  it('gives ids from the prefix and the position, the same on every parse', () => {
    const text = '<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>';
    expect(parseToolCallTurn(hermesToolCalls, TOOLS, text, { idPrefix: 'call_t3_' }).toolCalls[0]!.id).toBe('call_t3_0');
  });

  it('turns every kind of malformed call into an observation, in its place among the well-formed ones', () => {
    const turn = hermes(
      [
        '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"\n</tool_call>',
        '<tool_call>\n["get_weather"]\n</tool_call>',
        '<tool_call>\n{"name": "search", "arguments": {"q": "x"}}\n</tool_call>',
        '<tool_call>\n{"name": "add", "arguments": {"a": 1, "b": "two"}}\n</tool_call>',
        '<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>',
        '<tool_call>\n{"name": "get_weather", "argu',
      ].join('\n'),
    );
    expect(turn.toolCalls).toEqual([{ id: 'call_4', index: 4, name: 'now', arguments: {} }]);
    expect(turn.malformed.map((call) => [call.index, call.kind, call.name])).toEqual([
      [0, 'invalid-json', undefined],
      [1, 'not-a-call', undefined],
      [2, 'unknown-tool', 'search'],
      [3, 'invalid-arguments', 'add'],
      [5, 'unterminated', undefined],
    ]);
    const [json, shape, unknown, args, cut] = turn.malformed;
    expect(json!.text).toBe('{"name": "get_weather", "arguments": {"city": "Paris"');
    expect(json!.observation).toContain('not valid JSON');
    expect(json!.observation).toContain('<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>');
    expect(shape!.observation).toContain('a string "name" and an object "arguments"');
    expect(unknown!.observation).toBe('Error: there is no tool named "search". The tools are: get_weather, add, now.');
    expect(args!.problems).toEqual(['b: Invalid input: expected number, received string']);
    expect(args!.observation).toContain('the arguments of add do not match');
    expect(args!.observation).toContain('b: Invalid input: expected number, received string');
    expect(cut!.observation).toContain('cut off');
  });

  it('checks arguments against the whole schema: required, enum, no extra keys', () => {
    const problems = (args: string) => hermes(`<tool_call>\n{"name": "get_weather", "arguments": ${args}}\n</tool_call>`).malformed[0]?.problems;
    expect(problems('{"city": "Oslo", "unit": "celsius"}')).toBeUndefined();
    expect(problems('{}')).toEqual(['city: Invalid input: expected string, received undefined']);
    expect(problems('{"city": "Oslo", "unit": "kelvin"}')![0]).toMatch(/^unit: /);
    expect(problems('{"city": "Oslo", "when": "now"}')![0]).toMatch(/Unrecognized key: "when"/);
  });
});

describe('Llama 3 JSON tool calls', () => {
  it('reads the turn as one call, with or without <|python_tag|>, "parameters" or "arguments"', () => {
    const call = [{ id: 'call_0', index: 0, name: 'get_weather', arguments: { city: 'Paris' } }];
    expect(llama('{"name": "get_weather", "parameters": {"city": "Paris"}}').toolCalls).toEqual(call);
    expect(llama('<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}<|eom_id|>').toolCalls).toEqual(call);
    expect(llama('{"name": "get_weather", "arguments": {"city": "Paris"}}<|eot_id|>').toolCalls).toEqual(call);
    expect(llama('  {"name": "get_weather", "parameters": {"city": "Paris"}}').content).toBe('');
  });

  it('reads several calls written as a list or separated by ";"', () => {
    const names = (text: string) => llama(text).toolCalls.map((call) => [call.id, call.name, call.arguments]);
    const expected = [
      ['call_0', 'add', { a: 1, b: 2 }],
      ['call_1', 'get_weather', { city: 'Oslo; Norway' }],
    ];
    expect(names('[{"name": "add", "parameters": {"a": 1, "b": 2}}, {"name": "get_weather", "parameters": {"city": "Oslo; Norway"}}]')).toEqual(
      expected,
    );
    expect(names('{"name": "add", "parameters": {"a": 1, "b": 2}}; {"name": "get_weather", "parameters": {"city": "Oslo; Norway"}}')).toEqual(
      expected,
    );
  });

  it('leaves an answer that is not a call as content, even one that starts with "{"', () => {
    expect(llama('The weather in Paris is mild.')).toEqual({
      family: 'llama3-json',
      content: 'The weather in Paris is mild.',
      toolCalls: [],
      malformed: [],
    });
    expect(llama('{x | x > 2} is the set.').toolCalls).toEqual([]);
  });

  it('turns malformed calls into observations in its own syntax', () => {
    const bad = llama('<|python_tag|>{"name": "get_weather", "parameters": {"city": }}');
    expect(bad.malformed.map((call) => call.kind)).toEqual(['invalid-json']);
    expect(bad.malformed[0]!.observation).toContain('{"name": function name, "parameters": dictionary of argument name and its value}');
    expect(llama('<|python_tag|>brave_search.call(query="x")').malformed[0]!.kind).toBe('invalid-json');
    expect(llama('{"name": "get_weather", "parameters": {"city": "Pa').malformed[0]!.kind).toBe('unterminated');
    expect(llama('{"name": "add", "parameters": {"a": 1}}').malformed[0]!.problems).toEqual([
      'b: Invalid input: expected number, received undefined',
    ]);
  });
});

describe('the tool-call format of a model', () => {
  it('is Hermes for the bundled Qwen3 tokenizer and Llama 3 JSON for the Llama 3.1 and 3.2 templates', async () => {
    expect(toolCallFormatOf(await loadModelTokenizer()).family).toBe('hermes');
    expect(toolCallFormatForTemplate(await LLAMA_31_TEMPLATE).family).toBe('llama3-json');
    expect(toolCallFormatForTemplate(await LLAMA_32_TEMPLATE).family).toBe('llama3-json');
  });

  it('is a typed error for a template no format knows', () => {
    expect(() => toolCallFormatForTemplate('{{ messages[0].content }}', 'my-model')).toThrow(UnknownToolCallFormatError);
    expect(() => toolCallFormatForTemplate('{{ messages[0].content }}', 'my-model')).toThrow(/my-model.*hermes, llama3-json/);
  });

  it("can be a user's family, asked before the built-ins", () => {
    const mistral: ToolCallFormat = {
      family: 'mistral',
      detect: (template) => template.includes('[TOOL_CALLS]'),
      parse: (text) => {
        const at = text.indexOf('[TOOL_CALLS]');
        if (at < 0) return { content: text.trim(), calls: [] };
        return { content: text.slice(0, at).trim(), calls: [{ json: JSON.stringify(JSON.parse(text.slice(at + 12))[0]), complete: true }] };
      },
      argumentKeys: ['arguments'],
      callSyntax: '[TOOL_CALLS][{"name": …, "arguments": {…}}]',
      resultMessage: (result) => ({ role: 'tool', tool_call_id: result.id, content: result.content }),
    };
    const unregister = registerToolCallFormat(mistral);
    try {
      expect(registeredToolCallFormats()[0]).toBe(mistral);
      const format = toolCallFormatForTemplate('[TOOL_CALLS] <tool_call></tool_call>');
      expect(format.family).toBe('mistral');
      expect(parseToolCallTurn(format, TOOLS, '[TOOL_CALLS][{"name": "now", "arguments": {}}]').toolCalls[0]!.name).toBe('now');
    } finally {
      unregister();
    }
    expect(registeredToolCallFormats()).toEqual([hermesToolCalls, llama3JsonToolCalls]);
  });

  it('can replace a built-in and give it back', () => {
    const stricter = { ...hermesToolCalls, detect: () => false };
    const unregister = registerToolCallFormat(stricter);
    expect(registeredToolCallFormats()).toEqual([stricter, llama3JsonToolCalls]);
    unregister();
    expect(registeredToolCallFormats()).toEqual([hermesToolCalls, llama3JsonToolCalls]);
  });
});

describe('tool sets', () => {
  it('refuse a duplicate name', () => {
    expect(() => toolSet([functionTool('a', { type: 'object' }), functionTool('a', { type: 'object' })])).toThrow(ToolDefinitionError);
  });
});

beforeAll(() => {
  // The registry is process-wide: the built-ins must be there, in this order, whatever ran before.
  expect(registeredToolCallFormats().map((format) => format.family)).toEqual(['hermes', 'llama3-json']);
});
