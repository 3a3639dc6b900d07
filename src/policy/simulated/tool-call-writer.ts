import type { JsonSchema } from '../../tokens/tool-definitions.js';

/** Of a turn that calls tools: one call is malformed (a third each: bad JSON, an unknown tool, arguments off-schema). */
export const MALFORMED_PROBABILITY = 0.25;
/** Of a turn that calls tools: a second, well-formed call follows the first. */
export const SECOND_CALL_PROBABILITY = 0.25;
/** Of a turn after tool results: it answers instead of calling again. It always answers after MAX_CALL_TURNS. */
export const ANSWER_AFTER_RESULTS_PROBABILITY = 0.6;
export const MAX_CALL_TURNS = 3;

const TOOLS_BLOCK = /<tools>\n([\s\S]*?)\n<\/tools>/;

interface OfferedTool {
  name: string;
  parameters: JsonSchema;
}

/**
 * Tool calls in Qwen3's (Hermes) format for a prompt that offers tools, found by the `<tools>` block its template
 * writes in the system turn; nothing is drawn (and nothing written) for any other prompt, so other answers keep their
 * random streams. A turn that calls writes its reasoning, then one call (sometimes two), each as the template renders
 * calls (`tojson` spacing), so a well-formed turn re-renders exactly; with MALFORMED_PROBABILITY one of them is
 * malformed. A turn after tool results answers with `writeFinal()` (ANSWER_AFTER_RESULTS_PROBABILITY, always after
 * MAX_CALL_TURNS turns of calls since the user's question).
 */
export function writeToolCallAnswer(decodedContext: string, writeFinal: () => string, random: () => number): string | undefined {
  const tools = offeredTools(decodedContext);
  if (tools.length === 0) return undefined;
  const { callTurns, afterResults } = progress(decodedContext);
  if (afterResults && (callTurns >= MAX_CALL_TURNS || random() < ANSWER_AFTER_RESULTS_PROBABILITY)) {
    return `<think>\nI have what I need from the tools.\n</think>\n\n${writeFinal()}`;
  }
  const first = tools[Math.floor(random() * tools.length)]!;
  const calls = [random() < MALFORMED_PROBABILITY ? malformedCall(first, random) : wellFormedCall(first, random)];
  if (random() < SECOND_CALL_PROBABILITY) calls.push(wellFormedCall(tools[Math.floor(random() * tools.length)]!, random));
  return `<think>\nThe question needs ${first.name}, so I call it.\n</think>\n\n${calls.map((call) => `<tool_call>\n${call}\n</tool_call>`).join('\n')}`;
}

function offeredTools(decodedContext: string): OfferedTool[] {
  const block = TOOLS_BLOCK.exec(decodedContext);
  if (!block) return [];
  return block[1]!.split('\n').flatMap((line) => {
    try {
      const tool = JSON.parse(line) as { function?: { name?: unknown; parameters?: JsonSchema }; name?: unknown; parameters?: JsonSchema };
      const declared = tool.function ?? tool;
      return typeof declared.name === 'string' ? [{ name: declared.name, parameters: declared.parameters ?? { type: 'object' } }] : [];
    } catch {
      return [];
    }
  });
}

/** Turns of calls since the user's question, and whether the last turn before this one is tool results. */
function progress(decodedContext: string): { callTurns: number; afterResults: boolean } {
  const messages = decodedContext.split('<|im_start|>').slice(1);
  let callTurns = 0;
  for (const message of messages) {
    if (message.startsWith('user\n') && !message.startsWith('user\n<tool_response>')) callTurns = 0;
    if (message.startsWith('assistant\n') && message.includes('<tool_call>')) callTurns += 1;
  }
  return { callTurns, afterResults: messages.at(-2)?.startsWith('user\n<tool_response>') ?? false };
}

function wellFormedCall(tool: OfferedTool, random: () => number): string {
  return templateJson({ name: tool.name, arguments: exampleValue(tool.parameters, random) });
}

function malformedCall(tool: OfferedTool, random: () => number): string {
  const kind = random();
  const args = kind >= 2 / 3 ? wrongArguments(tool.parameters, random) : undefined;
  if (args) return templateJson({ name: tool.name, arguments: args });
  if (kind >= 1 / 3) return templateJson({ name: `${tool.name}_v2`, arguments: exampleValue(tool.parameters, random) });
  // Bad JSON: the call object is never closed.
  return wellFormedCall(tool, random).slice(0, -1);
}

const WORDS = ['Paris', 'blue', 'example', 'Zürich', 'seven', 'report.txt'];

/** A value the schema accepts, for the usual shapes of tool parameters (types, enums, consts, bounds, nesting). */
function exampleValue(schema: JsonSchema, random: () => number): unknown {
  if ('const' in schema) return schema['const'];
  if (Array.isArray(schema['enum'])) return schema['enum'][Math.floor(random() * schema['enum'].length)];
  const type = Array.isArray(schema['type']) ? (schema['type'] as unknown[]).find((t) => t !== 'null') : schema['type'];
  const min = typeof schema['minimum'] === 'number' ? schema['minimum'] : 0;
  const max = typeof schema['maximum'] === 'number' ? schema['maximum'] : min + 100;
  switch (type) {
    case 'integer':
      return Math.ceil(min) + Math.floor(random() * (Math.floor(max) - Math.ceil(min) + 1));
    case 'number':
      return Math.round((min + random() * (max - min)) * 100) / 100;
    case 'boolean':
      return random() < 0.5;
    case 'null':
      return null;
    case 'array': {
      const items = (schema['items'] ?? {}) as JsonSchema;
      const count = Math.max(typeof schema['minItems'] === 'number' ? schema['minItems'] : 1, 1);
      return Array.from({ length: count }, () => exampleValue(items, random));
    }
    case 'object':
    case undefined: {
      if (type === undefined && !('properties' in schema)) return WORDS[Math.floor(random() * WORDS.length)];
      const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
      const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
      const value: Record<string, unknown> = {};
      for (const [key, property] of Object.entries(properties)) {
        if (required.has(key) || random() < 0.5) value[key] = exampleValue(property, random);
      }
      return value;
    }
    default:
      return WORDS[Math.floor(random() * WORDS.length)];
  }
}

/** Arguments its schema refuses: a required (else any) typed property with a value of another type; none if none. */
function wrongArguments(schema: JsonSchema, random: () => number): Record<string, unknown> | undefined {
  const properties = (schema['properties'] ?? {}) as Record<string, JsonSchema>;
  const required = Array.isArray(schema['required']) ? (schema['required'] as string[]) : [];
  const key = [...required, ...Object.keys(properties)].find((name) => typeof properties[name]?.['type'] === 'string');
  if (key === undefined) return undefined;
  const args = exampleValue(schema, random) as Record<string, unknown>;
  args[key] = properties[key]!['type'] === 'string' ? 7 : 'seven';
  return args;
}

/** JSON as chat templates' `tojson` writes it (Python's json.dumps: `, ` and `: `, non-ASCII kept). */
function templateJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(templateJson).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.entries(value)
      .map(([key, item]) => `${JSON.stringify(key)}: ${templateJson(item)}`)
      .join(', ')}}`;
  }
  return JSON.stringify(value);
}
