import { toolRoleMessage, type CallText, type ToolCallFormat, type ToolCallText } from './tool-call-format.js';

const PYTHON_TAG = '<|python_tag|>';
const END_OF_TURN = /(<\|eom_id\|>|<\|eot_id\|>)$/;
/** Without the tag, a turn is a call only when it opens like one: an answer may well start with `{`. */
const LOOKS_LIKE_CALL = /^\[?\s*\{\s*"name"\s*:/;

/**
 * Llama 3.1 / 3.2 JSON tool calls, as their templates ask for them ("Respond in the format {"name": function name,
 * "parameters": dictionary of argument name and its value}"): the whole turn is the call, optionally after
 * `<|python_tag|>`; several calls are a JSON list or `;`-separated (as Llama 3.2 writes them and vLLM's `llama3_json`
 * parser reads them); `arguments` is accepted for `parameters`. Results return as `tool` messages, which the template
 * renders under the `ipython` header. Built-in tools (`brave_search.call(…)`, code after the tag) are not JSON calls:
 * they come back as malformed.
 */
export const llama3JsonToolCalls: ToolCallFormat = {
  family: 'llama3-json',
  detect: (chatTemplate) => chatTemplate.includes('<|start_header_id|>') && chatTemplate.includes('"parameters"'),
  parse: parseLlama3,
  argumentKeys: ['parameters', 'arguments'],
  callSyntax: '{"name": function name, "parameters": dictionary of argument name and its value}',
  resultMessage: toolRoleMessage,
};

function parseLlama3(text: string): ToolCallText {
  const turn = text.replace(END_OF_TURN, '');
  const tag = turn.indexOf(PYTHON_TAG);
  if (tag >= 0) return { content: turn.slice(0, tag).trim(), calls: splitCalls(turn.slice(tag + PYTHON_TAG.length).trim()) };
  const body = turn.trim();
  if (!LOOKS_LIKE_CALL.test(body)) return { content: body, calls: [] };
  return { content: '', calls: splitCalls(body) };
}

function splitCalls(body: string): CallText[] {
  try {
    const value: unknown = JSON.parse(body);
    if (Array.isArray(value)) return value.map((call) => ({ json: JSON.stringify(call), complete: true }));
    return [{ json: body, complete: true }];
  } catch {
    const pieces = topLevelPieces(body);
    return pieces.map((piece) => ({ json: piece.text, complete: piece.closed }));
  }
}

/** `;`-separated JSON values, split outside strings and brackets; the last is unclosed when the turn was cut off. */
function topLevelPieces(body: string): { text: string; closed: boolean }[] {
  const pieces: { text: string; closed: boolean }[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < body.length; i++) {
    const char = body[i];
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
    } else if (char === '"') inString = true;
    else if (char === '{' || char === '[') depth++;
    else if (char === '}' || char === ']') depth--;
    else if (char === ';' && depth === 0) {
      pieces.push({ text: body.slice(start, i).trim(), closed: true });
      start = i + 1;
    }
  }
  pieces.push({ text: body.slice(start).trim(), closed: depth <= 0 && !inString });
  return pieces.filter((piece) => piece.text !== '');
}
