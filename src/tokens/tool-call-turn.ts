import type { ModelTokenizer } from './model-tokenizer.js';
import type { CallText, ToolCallFormat } from './tool-call-format.js';
import type { ToolSet } from './tool-definitions.js';

/** A well-formed call of an offered tool, its arguments matching the tool's schema. */
export interface ToolCall {
  /** `${idPrefix}${index}`: the same on every replay of the turn, unlike a random id. */
  id: string;
  /** Its position among the turn's calls, malformed ones included. */
  index: number;
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * Why a call could not be run:
 * - `unterminated`: cut off before its end (the length limit);
 * - `invalid-json`: its text is not JSON;
 * - `not-a-call`: JSON, but not an object with a string `name` and an object of arguments;
 * - `unknown-tool`: it names a tool that was not offered;
 * - `invalid-arguments`: its arguments do not match the tool's JSON Schema.
 */
export type MalformedToolCallKind = 'unterminated' | 'invalid-json' | 'not-a-call' | 'unknown-tool' | 'invalid-arguments';

/** A call that could not be run: data, never thrown, answered by its `observation` so the model can learn from it. */
export interface MalformedToolCall {
  id: string;
  index: number;
  kind: MalformedToolCallKind;
  /** The tool it named, when it named one. */
  name?: string;
  /** The call's text as the model wrote it. */
  text: string;
  /** The schema's complaints (`invalid-arguments`), one per line. */
  problems: string[];
  /** What the model is told instead of a result: a `tool` message, in the call's place. */
  observation: string;
}

/** A turn's output read as tool calls. */
export interface ToolCallTurn {
  /** The format that read it. */
  family: string;
  content: string;
  reasoning?: string;
  toolCalls: ToolCall[];
  malformed: MalformedToolCall[];
}

export interface ParseOptions {
  /** Prefix of the calls' ids (`call_` by default); make it unique per turn (`call_t3_`) when ids must not repeat. */
  idPrefix?: string;
}

/**
 * Reads a turn's output text (decoded with special tokens, final end-of-turn token optional) as tool calls in the
 * model family's format, checking each against the offered tools. Never throws on what the model wrote: every call
 * is either a ToolCall or a MalformedToolCall with an observation.
 */
export function parseToolCallTurn(format: ToolCallFormat, tools: ToolSet, text: string, options: ParseOptions = {}): ToolCallTurn {
  const idPrefix = options.idPrefix ?? 'call_';
  const found = format.parse(text);
  const turn: ToolCallTurn = {
    family: format.family,
    content: found.content,
    ...(found.reasoning === undefined ? {} : { reasoning: found.reasoning }),
    toolCalls: [],
    malformed: [],
  };
  found.calls.forEach((call, index) => {
    const checked = checkCall(format, tools, call);
    const id = `${idPrefix}${index}`;
    if ('arguments' in checked) turn.toolCalls.push({ id, index, name: checked.name, arguments: checked.arguments });
    else turn.malformed.push({ id, index, text: call.json, ...checked, observation: observationOf(format, tools, checked) });
  });
  return turn;
}

/**
 * Reads a generated turn's output ids as tool calls: decoded with their special tokens (a format may need them, as
 * Llama 3's `<|python_tag|>`), without the final EOS when the turn ended with one.
 */
export function parseTurnOutput(
  tokenizer: ModelTokenizer,
  format: ToolCallFormat,
  tools: ToolSet,
  outputIds: readonly number[],
  options: ParseOptions = {},
): ToolCallTurn {
  const ids = outputIds.at(-1) === tokenizer.eosTokenId ? outputIds.slice(0, -1) : outputIds;
  return parseToolCallTurn(format, tools, tokenizer.decodeAll(ids), options);
}

type Checked = { name: string; arguments: Record<string, unknown> } | { kind: MalformedToolCallKind; name?: string; problems: string[] };

function checkCall(format: ToolCallFormat, tools: ToolSet, call: CallText): Checked {
  if (!call.complete) return { kind: 'unterminated', problems: [] };
  let value: unknown;
  try {
    value = JSON.parse(call.json);
  } catch {
    return { kind: 'invalid-json', problems: [] };
  }
  if (!isObject(value) || typeof value['name'] !== 'string') return { kind: 'not-a-call', problems: [] };
  const name = value['name'];
  const key = format.argumentKeys.find((candidate) => candidate in value);
  // A call of a tool that takes nothing may leave its arguments out.
  const args = key === undefined ? {} : value[key];
  if (!isObject(args)) return { kind: 'not-a-call', name, problems: [] };
  if (!tools.has(name)) return { kind: 'unknown-tool', name, problems: [] };
  const problems = tools.argumentProblems(name, args);
  if (problems.length > 0) return { kind: 'invalid-arguments', name, problems };
  return { name, arguments: args };
}

/**
 * The observation a malformed call becomes. Its own words, not the JSON parser's: Node's messages change between
 * versions, and the observation becomes tokens that a retry on another worker must reproduce.
 */
function observationOf(format: ToolCallFormat, tools: ToolSet, call: { kind: MalformedToolCallKind; name?: string; problems: string[] }): string {
  const syntax = `Write each call as:\n${format.callSyntax}`;
  switch (call.kind) {
    case 'unterminated':
      return `Error: the tool call was cut off before its end, so it was not run. ${syntax}`;
    case 'invalid-json':
      return `Error: the tool call is not valid JSON, so it was not run. ${syntax}`;
    case 'not-a-call':
      return `Error: a tool call must be a JSON object with a string "name" and an object "${format.argumentKeys[0]}". ${syntax}`;
    case 'unknown-tool':
      return `Error: there is no tool named ${JSON.stringify(call.name)}. The tools are: ${tools.names.join(', ') || '(none)'}.`;
    case 'invalid-arguments':
      return `Error: the arguments of ${call.name} do not match its parameters schema, so it was not run:\n${call.problems.join('\n')}`;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
