// @ts-check
/**
 * An agent program written with the Vercel AI SDK (`ai` and `@ai-sdk/openai-compatible`), run by Ratchet's CPU worker
 * once per trajectory. Ratchet starts it with OPENAI_BASE_URL (the trajectory's chat completions endpoint),
 * OPENAI_API_KEY (the run's key), RATCHET_MODEL, RATCHET_TASK (the task's JSON file) and RATCHET_RESULT (where the
 * answer goes). Every model call is one durable GPU turn of the trajectory. Run by hand against such an endpoint:
 *
 *   OPENAI_BASE_URL=... OPENAI_API_KEY=... RATCHET_MODEL=policy RATCHET_TASK=task.json RATCHET_RESULT=out.json \
 *     node examples/agents/ts-agent.mjs
 *
 * Deterministic, as a re-run program must be: given the same answers it makes the same calls in the same order (its
 * tools are pure functions of their arguments, and nothing depends on the clock or a random draw), one at a time.
 * Assistant messages go back as the SDK received them, `reasoning_content` included, so the trajectory's token
 * sequence is extended, never forked.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, tool } from 'ai';
import { z } from 'zod';

/** At most this many model calls (GPU turns) per run, malformed-call retries included. */
const MAX_MODEL_CALLS = 6;
/** Calculator input longer than this, or nested deeper, is refused (a tool answers every call, quickly). */
const MAX_EXPRESSION_LENGTH = 500;
const MAX_DEPTH = 50;

const SYSTEM = [
  'You solve math problems. You may use the calculator for arithmetic and unit_convert for units.',
  'When you are done, give the final answer as \\boxed{...}.',
].join(' ');

/** An error of the calculator's input: the tool answers with its message, it never throws. */
class CalcError extends Error {}

/**
 * Evaluates + - * / % ^, unary signs, parentheses and decimal numbers (with an exponent) by recursive descent: no eval.
 * @param {string} text
 * @returns {number}
 */
function evaluate(text) {
  if (text.length > MAX_EXPRESSION_LENGTH) throw new CalcError(`the expression is longer than ${MAX_EXPRESSION_LENGTH} characters`);
  const tokens = text.match(/\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\*\*|[-+*/%^()×÷]|\S/g) ?? [];
  let at = 0;
  const peek = () => tokens[at];
  const take = () => tokens[at++];
  /** @param {number} depth @returns {number} */
  const sum = (depth) => {
    let value = product(depth);
    while (peek() === '+' || peek() === '-') value = take() === '+' ? value + product(depth) : value - product(depth);
    return value;
  };
  /** @param {number} depth @returns {number} */
  const product = (depth) => {
    let value = unary(depth);
    for (let op = peek(); op === '*' || op === '/' || op === '%' || op === '×' || op === '÷'; op = peek()) {
      take();
      const right = unary(depth);
      if ((op === '/' || op === '÷' || op === '%') && right === 0) throw new CalcError('division by zero');
      value = op === '*' || op === '×' ? value * right : op === '%' ? value % right : value / right;
    }
    return value;
  };
  /** @param {number} depth @returns {number} */
  const unary = (depth) => {
    if (depth > MAX_DEPTH) throw new CalcError(`nested deeper than ${MAX_DEPTH}`);
    const sign = peek();
    if (sign !== '-' && sign !== '+') return power(depth);
    take();
    return sign === '-' ? -unary(depth + 1) : unary(depth + 1);
  };
  /** @param {number} depth @returns {number} */
  const power = (depth) => {
    const base = atom(depth);
    if (peek() !== '^' && peek() !== '**') return base;
    take();
    return base ** unary(depth + 1); // right-associative
  };
  /** @param {number} depth @returns {number} */
  const atom = (depth) => {
    const token = take();
    if (token === undefined) throw new CalcError('the expression ends too early');
    if (token === '(') {
      const value = sum(depth + 1);
      if (take() !== ')') throw new CalcError('a "(" is not closed');
      return value;
    }
    if (/^[\d.]/.test(token)) return Number(token);
    throw new CalcError(`unexpected ${JSON.stringify(token)}: only numbers, + - * / % ^ and parentheses`);
  };
  if (tokens.length === 0) throw new CalcError('the expression is empty');
  const value = sum(0);
  if (at < tokens.length) throw new CalcError(`unexpected ${JSON.stringify(tokens[at])}`);
  if (!Number.isFinite(value)) throw new CalcError('the result is not a finite number');
  return value;
}

/** A number as the tools write it: at most 12 significant digits, so float noise is not shown to the model. */
const show = (/** @type {number} */ value) => String(Number(value.toPrecision(12)));

/** @param {string} expression */
function calculate(expression) {
  try {
    return `${expression} = ${show(evaluate(expression))}`;
  } catch (error) {
    if (error instanceof CalcError) return `error: ${error.message}`;
    return 'error: the expression could not be evaluated';
  }
}

/** Each unit's dimension and its size in the dimension's base unit (temperatures are converted apart). */
const UNITS = /** @type {Record<string, [string, number]>} */ ({
  mm: ['length', 0.001],
  cm: ['length', 0.01],
  m: ['length', 1],
  km: ['length', 1000],
  in: ['length', 0.0254],
  ft: ['length', 0.3048],
  yd: ['length', 0.9144],
  mi: ['length', 1609.344],
  mg: ['mass', 1e-6],
  g: ['mass', 0.001],
  kg: ['mass', 1],
  oz: ['mass', 0.028349523125],
  lb: ['mass', 0.45359237],
  s: ['time', 1],
  min: ['time', 60],
  h: ['time', 3600],
  day: ['time', 86400],
  ml: ['volume', 0.001],
  l: ['volume', 1],
  gal: ['volume', 3.785411784],
  c: ['temperature', 1],
  f: ['temperature', 1],
  k: ['temperature', 1],
});
/** @type {Record<string, { toKelvin: (v: number) => number; fromKelvin: (v: number) => number }>} */
const TEMPERATURE = {
  c: { toKelvin: (v) => v + 273.15, fromKelvin: (v) => v - 273.15 },
  f: { toKelvin: (v) => ((v - 32) * 5) / 9 + 273.15, fromKelvin: (v) => ((v - 273.15) * 9) / 5 + 32 },
  k: { toKelvin: (v) => v, fromKelvin: (v) => v },
};

/** @param {{ value: number; from: string; to: string }} input */
function convert({ value, from, to }) {
  const unit = (/** @type {string} */ name) => name.trim().toLowerCase().replace(/^°/, '');
  const [a, b] = [unit(from), unit(to)];
  const [fromUnit, toUnit] = [Object.hasOwn(UNITS, a) ? UNITS[a] : undefined, Object.hasOwn(UNITS, b) ? UNITS[b] : undefined];
  const known = Object.keys(UNITS).join(', ');
  if (!fromUnit) return `error: unknown unit ${JSON.stringify(from)} (known: ${known})`;
  if (!toUnit) return `error: unknown unit ${JSON.stringify(to)} (known: ${known})`;
  if (fromUnit[0] !== toUnit[0]) return `error: cannot convert ${fromUnit[0]} (${from}) to ${toUnit[0]} (${to})`;
  const result = fromUnit[0] === 'temperature' ? TEMPERATURE[b].fromKelvin(TEMPERATURE[a].toKelvin(value)) : (value * fromUnit[1]) / toUnit[1];
  if (!Number.isFinite(result)) return 'error: the result is not a finite number';
  return `${show(value)} ${from} = ${show(result)} ${to}`;
}

const tools = {
  calculator: tool({
    description: 'Evaluate an arithmetic expression: numbers, + - * / % ^ and parentheses.',
    inputSchema: z.object({ expression: z.string().describe('for example "(3 + 4) * 2 ^ 3"') }),
    execute: async ({ expression }) => calculate(expression),
  }),
  unit_convert: tool({
    description: `Convert a quantity between units of length, mass, time, volume or temperature (${Object.keys(UNITS).join(', ')}).`,
    inputSchema: z.object({ value: z.number(), from: z.string().describe('unit to convert from'), to: z.string().describe('unit to convert to') }),
    execute: async (input) => convert(input),
  }),
};

/** @param {string} name */
function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set: Ratchet's worker sets it when it runs an agent program`);
  return value;
}

async function main() {
  const task = JSON.parse(readFileSync(env('RATCHET_TASK'), 'utf8'));
  if (typeof task.problem !== 'string') throw new Error(`${env('RATCHET_TASK')} has no problem`);
  const provider = createOpenAICompatible({ name: 'ratchet', baseURL: env('OPENAI_BASE_URL'), apiKey: env('OPENAI_API_KEY') });
  const model = provider.chatModel(env('RATCHET_MODEL'));

  /** @type {import('ai').ModelMessage[]} */
  const messages = [{ role: 'user', content: task.problem }];
  let calls = 0;
  let answer = '';
  while (calls < MAX_MODEL_CALLS) {
    const result = await generateText({
      model,
      system: SYSTEM,
      messages,
      tools,
      stopWhen: stepCountIs(MAX_MODEL_CALLS - calls),
      // A failed call ends the run: Ratchet runs the program again and answers the calls it made from the store.
      maxRetries: 0,
    });
    calls += result.steps.length;
    messages.push(...result.response.messages);
    answer = result.text;
    // A turn with a malformed tool call comes back as text, with Ratchet's `malformed_tool_calls` saying what was wrong:
    // tell the model, as a tool loop would, rather than taking the broken call for an answer.
    const body = /** @type {{ choices?: { message?: { malformed_tool_calls?: { observation: string }[] } }[] } | undefined} */ (result.response.body);
    const malformed = body?.choices?.[0]?.message?.malformed_tool_calls ?? [];
    if (malformed.length === 0) break;
    messages.push({ role: 'user', content: malformed.map(({ observation }) => observation).join('\n') });
  }
  writeFileSync(env('RATCHET_RESULT'), JSON.stringify({ answer }));
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
