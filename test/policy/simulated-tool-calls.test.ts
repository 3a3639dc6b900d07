import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_SIMULATED_POLICY, seededRandom, type SimulatedPolicyConfig } from '../../src/policy/simulated/policy-config.js';
import { AnswerBook, simulateGeneration } from '../../src/policy/simulated/generation.js';
import { NO_FAULTS } from '../../src/policy/simulated/faults.js';
import { MAX_CALL_TURNS, writeToolCallAnswer } from '../../src/policy/simulated/tool-call-writer.js';
import { loadModelTokenizer, type ChatMessage, type ModelTokenizer } from '../../src/tokens/model-tokenizer.js';
import type { ToolChatMessage } from '../../src/tokens/tool-call-format.js';
import { toolCallFormatOf } from '../../src/tokens/tool-call-formats.js';
import { parseToolCallTurn, parseTurnOutput, type ToolCallTurn } from '../../src/tokens/tool-call-turn.js';
import { functionTool, toolSet } from '../../src/tokens/tool-definitions.js';
import { assistantToolCallMessage, toolPromptIds, toolResultMessages, toolResultTokens } from '../../src/tokens/tool-messages.js';
import { hermesToolCalls } from '../../src/tokens/hermes-tool-calls.js';

const TOOLS = toolSet([
  functionTool(
    'get_weather',
    {
      type: 'object',
      properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] }, days: { type: 'integer', minimum: 1, maximum: 7 } },
      required: ['city'],
      additionalProperties: false,
    },
    'Weather forecast',
  ),
  functionTool('add', { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }),
  functionTool('now', { type: 'object', properties: {} }),
]);
const QUESTION: ChatMessage[] = [{ role: 'user', content: 'Will it rain in Paris this week?' }];
const CONFIG: SimulatedPolicyConfig = { ...DEFAULT_SIMULATED_POLICY, faults: NO_FAULTS };

let tok: ModelTokenizer;
let prompt: string;
beforeAll(async () => {
  tok = await loadModelTokenizer();
  prompt = tok.decodeAll(toolPromptIds(tok, QUESTION, TOOLS));
});

const final = () => 'It will not rain.';
const parse = (text: string): ToolCallTurn => parseToolCallTurn(hermesToolCalls, TOOLS, text);

describe('the simulated policy with tools (Qwen3 format)', () => {
  it('writes nothing and draws nothing when the prompt offers no tools', () => {
    let draws = 0;
    const random = () => {
      draws += 1;
      return 0.5;
    };
    expect(writeToolCallAnswer(tok.renderChat(QUESTION, true), final, random)).toBeUndefined();
    expect(draws).toBe(0);
  });

  it('calls the offered tools, mostly well-formed, sometimes malformed in every way, deterministically from its seed', () => {
    const write = (seed: number) => {
      const random = seededRandom(seed);
      return Array.from({ length: 200 }, () => writeToolCallAnswer(prompt, final, random)!);
    };
    const texts = write(11);
    expect(write(11)).toEqual(texts);
    expect(write(12)).not.toEqual(texts);
    const turns = texts.map(parse);
    for (const turn of turns) {
      expect(turn.toolCalls.length + turn.malformed.length).toBeGreaterThanOrEqual(1);
      expect(turn.content).toBe('');
      expect(turn.reasoning).toMatch(/so I call it/);
    }
    const wellFormed = turns.filter((turn) => turn.malformed.length === 0);
    expect(wellFormed.length).toBeGreaterThan(120);
    expect(new Set(wellFormed.flatMap((turn) => turn.toolCalls.map((call) => call.name)))).toEqual(new Set(['get_weather', 'add', 'now']));
    expect(turns.some((turn) => turn.toolCalls.length === 2)).toBe(true);
    const kinds = new Set(turns.flatMap((turn) => turn.malformed.map((call) => call.kind)));
    expect(kinds).toEqual(new Set(['invalid-json', 'unknown-tool', 'invalid-arguments']));
  });

  it('answers after tool results some of the time, and always after its last turn of calls', () => {
    const random = seededRandom(5);
    const afterResults = (turns: number) => {
      let context = prompt;
      for (let i = 0; i < turns; i++) {
        context += `<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n12:00\n</tool_response><|im_end|>\n<|im_start|>assistant\n`;
      }
      return Array.from({ length: 40 }, () => writeToolCallAnswer(context, final, random)!);
    };
    const once = afterResults(1);
    expect(once.filter((text) => text.endsWith(final())).length).toBeGreaterThan(10);
    expect(once.filter((text) => text.includes('<tool_call>')).length).toBeGreaterThan(5);
    expect(afterResults(MAX_CALL_TURNS).every((text) => text.endsWith(final()))).toBe(true);
  });

  it('generates token-exact tool-call episodes through simulateGeneration', () => {
    const format = toolCallFormatOf(tok);
    const book = new AnswerBook([]);
    let sawCall = false;
    let sawMalformed = false;
    for (let seed = 1; seed <= 12; seed++) {
      const random = seededRandom(seed);
      let ids = toolPromptIds(tok, QUESTION, TOOLS);
      const messages: ToolChatMessage[] = [...QUESTION];
      for (let n = 0; n < MAX_CALL_TURNS + 1; n++) {
        const generation = simulateGeneration(tok, book, CONFIG, ids, { maxNewTokens: 4096, sampling: SAMPLING, topLogprobs: 0 }, random);
        expect(generation.finishReason.type).toBe('stop');
        const turn = parseTurnOutput(tok, format, TOOLS, generation.outputIds, { idPrefix: `call_${n}_` });
        const calls = turn.toolCalls.length + turn.malformed.length;
        sawCall ||= turn.toolCalls.length > 0;
        sawMalformed ||= turn.malformed.length > 0;
        // A well-formed turn is written as the template renders calls; a malformed one is kept as written.
        const text = tok.decodeAll(generation.outputIds.slice(0, -1));
        messages.push(turn.malformed.length === 0 ? assistantToolCallMessage(turn) : { role: 'assistant', content: text });
        if (calls === 0) {
          ids = [...ids, ...generation.outputIds];
          expect(tok.decodeAll(ids)).toBe(tok.renderChat(messages, false, { tools: TOOLS.definitions }).replace(/\n$/, ''));
          break;
        }
        const results = toolResultMessages(
          format,
          turn,
          turn.toolCalls.map((call) => ({ id: call.id, name: call.name, content: `${call.name} ok` })),
        );
        messages.push(...results);
        ids = [...ids, ...generation.outputIds, ...toolResultTokens(tok, results, true).ids];
        expect(ids).toEqual(tok.encode(tok.renderChat(messages, true, { tools: TOOLS.definitions })));
        expect(n).toBeLessThan(MAX_CALL_TURNS);
      }
    }
    expect(sawCall).toBe(true);
    expect(sawMalformed).toBe(true);
  });
});

const SAMPLING = { temperature: 1, topP: 1, topK: -1, minP: 0, repetitionPenalty: 1 };

describe("the simulated policy's answers to an agent program", () => {
  it('knows a problem asked as it is (no instruction) by the first user message, and answers its gold when correct', () => {
    const book = new AnswerBook([{ qid: 'q', problem: 'What is 6 times 7?', gold: ['42'], source: 'math' }]);
    const asked = tok.decodeAll(
      toolPromptIds(
        tok,
        [
          { role: 'system', content: 'Use the tools.' },
          { role: 'user', content: 'What is 6 times 7?' },
        ],
        TOOLS,
      ),
    );
    expect(book.lookUp(asked)).toEqual(['42']);
    // Another problem's text, or the problem inside a longer message, is not it.
    const other = tok.decodeAll(toolPromptIds(tok, [{ role: 'user', content: 'What is 6 times 7? Explain.' }], TOOLS));
    expect(book.lookUp(other)).toBeUndefined();
  });
});
