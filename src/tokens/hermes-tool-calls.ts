import { toolRoleMessage, type CallText, type ToolCallFormat, type ToolCallText } from './tool-call-format.js';

const OPEN = '<tool_call>';
const CLOSE = '</tool_call>';
const THINK_OPEN = '<think>';
const THINK_CLOSE = '</think>';

/**
 * Hermes-style calls, as Qwen2.5 and Qwen3 templates teach them: after an optional `<think>…</think>`, any number of
 *
 *     <tool_call>
 *     {"name": <function-name>, "arguments": <args-json-object>}
 *     </tool_call>
 *
 * with content around them; results return as `tool` messages, which the template wraps in `<tool_response>` inside a
 * user turn. A call inside the reasoning is thinking, not a call (as vLLM's reasoning and hermes parsers split it).
 */
export const hermesToolCalls: ToolCallFormat = {
  family: 'hermes',
  detect: (chatTemplate) => chatTemplate.includes(OPEN) && chatTemplate.includes(CLOSE),
  parse: parseHermes,
  argumentKeys: ['arguments'],
  callSyntax: `${OPEN}\n{"name": <function-name>, "arguments": <args-json-object>}\n${CLOSE}`,
  resultMessage: toolRoleMessage,
};

function parseHermes(text: string): ToolCallText {
  const thought = splitReasoning(text);
  const content: string[] = [];
  const calls: CallText[] = [];
  let rest = thought.rest;
  for (let open = rest.indexOf(OPEN); open >= 0; open = rest.indexOf(OPEN)) {
    content.push(rest.slice(0, open));
    const close = rest.indexOf(CLOSE, open + OPEN.length);
    if (close < 0) {
      calls.push({ json: rest.slice(open + OPEN.length).trim(), complete: false });
      rest = '';
      break;
    }
    calls.push({ json: rest.slice(open + OPEN.length, close).trim(), complete: true });
    rest = rest.slice(close + CLOSE.length);
  }
  content.push(rest);
  return {
    content: content
      .map((piece) => piece.trim())
      .filter((piece) => piece !== '')
      .join('\n'),
    ...(thought.reasoning === undefined ? {} : { reasoning: thought.reasoning }),
    calls,
  };
}

/** The reasoning as Qwen3's template reads it back (between `<think>` and `</think>`, newlines trimmed), and the rest. */
function splitReasoning(text: string): { reasoning?: string; rest: string } {
  const close = text.indexOf(THINK_CLOSE);
  if (close < 0) {
    // Cut off while thinking: all of it is reasoning, and nothing is a call yet.
    const open = text.indexOf(THINK_OPEN);
    if (open >= 0 && text.slice(0, open).trim() === '') return { reasoning: trimNewlines(text.slice(open + THINK_OPEN.length)), rest: '' };
    return { rest: text };
  }
  const before = text.slice(0, close);
  const open = before.lastIndexOf(THINK_OPEN);
  return { reasoning: trimNewlines(open >= 0 ? before.slice(open + THINK_OPEN.length) : before), rest: text.slice(close + THINK_CLOSE.length) };
}

function trimNewlines(text: string): string {
  return text.replace(/^\n+|\n+$/g, '');
}
