// @ts-check
/**
 * The two tools of the calculator agents (ts-agent.mjs and workflow-agent/): pure functions of their arguments, so a
 * re-run agent gets the same tool results and makes the same calls. Each answers every input with a string, an error
 * included: a tool never throws at the model.
 */

/** Calculator input longer than this, or nested deeper, is refused (a tool answers every call, quickly). */
const MAX_EXPRESSION_LENGTH = 500;
const MAX_DEPTH = 50;

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
export function calculate(expression) {
  try {
    return `${expression} = ${show(evaluate(expression))}`;
  } catch (error) {
    if (error instanceof CalcError) return `error: ${error.message}`;
    return 'error: the expression could not be evaluated';
  }
}

/** Each unit's dimension and its size in the dimension's base unit (temperatures are converted apart). */
export const UNITS = /** @type {Record<string, [string, number]>} */ ({
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
export function convert({ value, from, to }) {
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
