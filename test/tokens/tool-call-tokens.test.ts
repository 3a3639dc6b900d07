import { beforeAll, describe, expect, it } from 'vitest';
import { loadModelTokenizer, type ChatMessage, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import type { ToolCallFormat, ToolChatMessage, ToolResult } from '../../src/tokens/tool-call-format.js';
import { toolCallFormatOf } from '../../src/tokens/tool-call-formats.js';
import { parseTurnOutput, type ToolCallTurn } from '../../src/tokens/tool-call-turn.js';
import { functionTool, toolSet } from '../../src/tokens/tool-definitions.js';
import {
  assistantToolCallMessage,
  MissingToolResultError,
  toolPromptIds,
  toolResultMessages,
  toolResultTokens,
} from '../../src/tokens/tool-messages.js';
import { llama3Tokenizer } from './fixtures/llama3-tokenizer.js';

const TOOLS = toolSet([
  functionTool('get_weather', { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, 'Current weather in a city'),
  functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
]);
const QUESTION: ChatMessage[] = [
  { role: 'system', content: 'You are a careful assistant.' },
  { role: 'user', content: 'What is the weather in Paris and in Zürich, and what is 2 + 3?' },
];

/** A turn as the model wrote it; `result` answers each well-formed call (none: the turn ends the episode). */
interface Step {
  output: string;
  eos?: boolean;
  results?: (turn: ToolCallTurn) => ToolResult[];
  /** The assistant message that renders the turn in the whole conversation (default: the parsed turn). */
  asMessage?: 'parsed' | 'verbatim';
}

/**
 * Builds a conversation the way a trajectory does, keeping every token: the prompt, each turn's output ids, then
 * the tokens of its results cut from the template. Checks after every turn that they are the tokens of the template's
 * rendering of the whole conversation so far, ending in the next generation prompt.
 */
function runEpisode(tok: ModelTokenizer, steps: readonly Step[], variables?: Record<string, unknown>): { ids: number[]; turns: ToolCallTurn[] } {
  const format: ToolCallFormat = toolCallFormatOf(tok);
  let ids = toolPromptIds(tok, QUESTION, TOOLS, variables);
  const messages: ToolChatMessage[] = [...QUESTION];
  const turns: ToolCallTurn[] = [];
  expect(tok.decodeAll(ids)).toBe(tok.renderChat(messages, true, { tools: TOOLS.definitions, ...(variables ? { variables } : {}) }));
  for (const [n, step] of steps.entries()) {
    const eos = step.eos ?? true;
    const outputIds = [...tok.encode(step.output), ...(eos ? [tok.eosTokenId] : [])];
    const turn = parseTurnOutput(tok, format, TOOLS, outputIds, { idPrefix: `call_t${n}_` });
    turns.push(turn);
    const results = toolResultMessages(format, turn, step.results?.(turn) ?? []);
    ids = [...ids, ...outputIds, ...toolResultTokens(tok, results, eos).ids];
    messages.push(step.asMessage === 'verbatim' ? { role: 'assistant', content: step.output } : assistantToolCallMessage(turn), ...results);
    const whole = tok.renderChat(messages, true, { tools: TOOLS.definitions, ...(variables ? { variables } : {}) });
    expect(tok.decodeAll(ids)).toBe(whole);
    expect(ids).toEqual(tok.encode(whole));
  }
  return { ids, turns };
}

const weather = (turn: ToolCallTurn): ToolResult[] =>
  turn.toolCalls.map((call) => ({
    id: call.id,
    name: call.name,
    content: call.name === 'add' ? '5' : JSON.stringify({ city: call.arguments['city'], celsius: 21 }),
  }));

describe('tool calls on the Qwen3 template, token-exact', () => {
  let tok: ModelTokenizer;
  beforeAll(async () => {
    tok = await loadModelTokenizer();
  });

  it('renders the tools into the prompt as the template does', () => {
    const prompt = tok.decodeAll(toolPromptIds(tok, QUESTION, TOOLS));
    expect(prompt).toContain('<tools>\n{"type": "function", "function": {"name": "get_weather", "description": "Current weather in a city"');
    expect(prompt.startsWith('<|im_start|>system\nYou are a careful assistant.\n\n# Tools')).toBe(true);
    expect(prompt.endsWith('<|im_start|>assistant\n')).toBe(true);
  });

  it('keeps prompt + calls + tool results + generation prompt equal to the whole conversation, over several turns', () => {
    const { turns } = runEpisode(tok, [
      {
        output:
          '<think>\nI need two cities.\n</think>\n\nLet me look both up.\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>\n' +
          '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Zürich"}}\n</tool_call>',
        results: weather,
      },
      { output: '<think>\nNow the sum.\n</think>\n\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>', results: weather },
    ]);
    expect(turns.map((turn) => turn.toolCalls.map((call) => call.id))).toEqual([['call_t0_0', 'call_t0_1'], ['call_t1_0']]);
    expect(turns[0]!.content).toBe('Let me look both up.');
  });

  it('answers a malformed call with its observation as a tool message, token-exact', () => {
    const { ids, turns } = runEpisode(tok, [
      {
        output:
          '<think>\nCalling.\n</think>\n\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}\n</tool_call>\n<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>',
        results: weather,
        asMessage: 'verbatim',
      },
    ]);
    expect(turns[0]!.malformed.map((call) => call.kind)).toEqual(['invalid-json']);
    const text = tok.decodeAll(ids);
    expect(text).toContain(`<tool_response>\n${turns[0]!.malformed[0]!.observation}\n</tool_response>\n<tool_response>\n5\n</tool_response>`);
  });

  it('closes a turn cut off inside a call (no EOS) before its observation', () => {
    const { turns } = runEpisode(tok, [
      { output: '<think>\nCalling.\n</think>\n\n<tool_call>\n{"name": "get_weather", "argu', eos: false, asMessage: 'verbatim' },
    ]);
    expect(turns[0]!.malformed.map((call) => call.kind)).toEqual(['unterminated']);
  });

  it('keeps the generated tokens, not a re-rendering, when the model spaces its JSON otherwise', () => {
    const output = '<think>\nx\n</think>\n\n<tool_call>\n{"name":"add","arguments":{"a":2,"b":3}}\n</tool_call>';
    // Rendering the parsed call would write `{"name": "add", "arguments": {"a": 2, "b": 3}}`: not what was generated.
    expect(() => runEpisode(tok, [{ output, results: weather }])).toThrow();
    runEpisode(tok, [{ output, results: weather, asMessage: 'verbatim' }]);
  });

  it('refuses to answer a well-formed call without its result', () => {
    const format = toolCallFormatOf(tok);
    const turn = parseTurnOutput(tok, format, TOOLS, tok.encode('<tool_call>\n{"name": "add", "arguments": {"a": 2, "b": 3}}\n</tool_call>'));
    expect(() => toolResultMessages(format, turn, [])).toThrow(MissingToolResultError);
  });
});

describe('tool calls on the Llama 3.1 template, token-exact', () => {
  let tok: ModelTokenizer;
  beforeAll(async () => {
    tok = await llama3Tokenizer();
  });

  it('offers the tools in the first user message (the default) or in the system message', () => {
    const inUser = tok.decodeAll(toolPromptIds(tok, QUESTION, TOOLS));
    expect(inUser).toContain('<|start_header_id|>user<|end_header_id|>\n\nGiven the following functions');
    expect(inUser).toContain('"name": "get_weather"');
    const inSystem = tok.decodeAll(toolPromptIds(tok, QUESTION, TOOLS, { tools_in_user_message: false }));
    expect(inSystem).toContain(
      'Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou have access to the following functions.',
    );
  });

  for (const variables of [undefined, { tools_in_user_message: false }]) {
    it(`keeps prompt + call + ipython result + generation prompt equal to the whole conversation (${JSON.stringify(variables ?? {})})`, () => {
      const { ids, turns } = runEpisode(
        tok,
        [
          { output: '{"name": "get_weather", "parameters": {"city": "Paris"}}', results: weather },
          { output: '{"name": "add", "parameters": {"a": 2, "b": 3}}', results: weather },
        ],
        variables,
      );
      expect(turns.map((turn) => turn.toolCalls[0]!.name)).toEqual(['get_weather', 'add']);
      expect(tok.decodeAll(ids)).toContain('<|start_header_id|>ipython<|end_header_id|>\n\n"{\\"city\\":\\"Paris\\",\\"celsius\\":21}"<|eot_id|>');
    });
  }

  it('keeps a <|python_tag|> call and a malformed call token-exact too', () => {
    const { turns } = runEpisode(tok, [
      { output: '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Paris"}}', results: weather, asMessage: 'verbatim' },
      { output: '{"name": "add", "parameters": {"a": 2}}', results: weather, asMessage: 'verbatim' },
    ]);
    expect(turns[0]!.toolCalls[0]!.arguments).toEqual({ city: 'Paris' });
    expect(turns[1]!.malformed.map((call) => call.kind)).toEqual(['invalid-arguments']);
  });
});
