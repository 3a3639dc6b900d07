import * as C from './complex.js';
import type { Complex } from './complex.js';
import { gamma } from './gamma.js';

/** A MathJSON expression as the compute-engine's LaTeX parser returns it. */
export type MathJson = number | string | { num?: string; str?: string; sym?: string } | readonly MathJson[];

/** The expression has no numeric value we trust (unknown head, text, infinite arithmetic). */
export class Unevaluable extends Error {
  override readonly name = 'Unevaluable';
  constructor(
    readonly reason: string,
    readonly overflow = false,
  ) {
    super(`cannot evaluate: ${reason}`);
  }
}

const MAX_STEPS = 100_000;
const MAX_DEPTH = 200;
const MAX_TERMS = 10_000;
const MAX_FACTORIAL = 170;

const CONSTANTS: Record<string, Complex> = {
  Pi: C.complex(Math.PI),
  pi: C.complex(Math.PI),
  ExponentialE: C.complex(Math.E),
  e: C.complex(Math.E),
  i: C.complex(0, 1),
  ImaginaryUnit: C.complex(0, 1),
  Half: C.complex(0.5),
};
const INFINITIES: Record<string, Complex> = {
  PositiveInfinity: C.complex(Number.POSITIVE_INFINITY),
  NegativeInfinity: C.complex(Number.NEGATIVE_INFINITY),
  ComplexInfinity: C.complex(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY),
};

type Unary = (z: Complex) => Complex;
const UNARY: Record<string, Unary> = {
  Sqrt: (z) => C.root(z, 2),
  Exp: C.exp,
  Ln: C.log,
  Lb: (z) => C.div(C.log(z), C.complex(Math.LN2)),
  Lg: (z) => C.div(C.log(z), C.complex(Math.LN10)),
  Sin: C.sin,
  Cos: C.cos,
  Tan: (z) => C.div(C.sin(z), C.cos(z)),
  Sec: (z) => C.div(C.complex(1), C.cos(z)),
  Csc: (z) => C.div(C.complex(1), C.sin(z)),
  Cot: (z) => C.div(C.cos(z), C.sin(z)),
  Arcsin: (z) => C.realOnly(z, Math.asin),
  Arccos: (z) => C.realOnly(z, Math.acos),
  Arctan: (z) => C.realOnly(z, Math.atan),
  Sinh: (z) => C.realOnly(z, Math.sinh),
  Cosh: (z) => C.realOnly(z, Math.cosh),
  Tanh: (z) => C.realOnly(z, Math.tanh),
  Abs: (z) => C.complex(C.magnitude(z)),
  Floor: (z) => C.realOnly(z, Math.floor),
  Ceil: (z) => C.realOnly(z, Math.ceil),
  Sign: (z) => C.realOnly(z, Math.sign),
  Conjugate: (z) => C.complex(z.re, -z.im),
  Real: (z) => C.complex(z.re),
  Imaginary: (z) => C.complex(z.im),
  Negate: C.neg,
  Square: (z) => C.mul(z, z),
  Degrees: (z) => C.mul(z, C.complex(Math.PI / 180)),
};

interface WalkState {
  steps: number;
  /** A real-valued operation on real arguments gave a non-real value (√ or log of a negative). */
  leftReals: boolean;
}

/** A value, and whether computing it left the real numbers (then the point is outside a real domain). */
export interface Evaluation {
  value: Complex;
  leftReals: boolean;
}

/** Evaluates MathJSON to a complex number, binding free symbols from `env`. Bounded in steps and depth. */
export function evaluate(json: MathJson, env: ReadonlyMap<string, Complex>): Evaluation {
  const state: WalkState = { steps: 0, leftReals: false };
  const value = walk(json, env, state, 0);
  if (!C.isFiniteComplex(value) && !isInfinityLiteral(json)) throw new Unevaluable('overflow', true);
  return { value, leftReals: state.leftReals };
}

function isInfinityLiteral(json: MathJson): boolean {
  if (typeof json === 'string') return json in INFINITIES;
  return Array.isArray(json) && (json[0] === 'Negate' || json[0] === 'Delimiter') && json.length === 2 && isInfinityLiteral(json[1] as MathJson);
}

function walk(json: MathJson, env: ReadonlyMap<string, Complex>, state: WalkState, depth: number): Complex {
  if (++state.steps > MAX_STEPS) throw new Unevaluable('too many steps');
  if (depth > MAX_DEPTH) throw new Unevaluable('too deep');
  if (typeof json === 'number') return C.complex(json);
  if (typeof json === 'string') return symbolValue(json, env);
  if (!Array.isArray(json)) {
    const obj = json as { num?: string; sym?: string };
    if (typeof obj.num === 'string') return C.complex(Number(obj.num.replace(/[()]/g, '')));
    if (typeof obj.sym === 'string') return symbolValue(obj.sym, env);
    throw new Unevaluable('text');
  }
  const [head, ...args] = json as readonly MathJson[];
  const at = (k: number): Complex => walk(args[k] as MathJson, env, state, depth + 1);
  if (head === 'Negate' && args.length === 1 && isInfinityLiteral(args[0] as MathJson)) return C.neg(at(0));
  if (head === 'Delimiter' || head === 'Sequence') {
    if (args.length >= 1 && (args.length === 1 || (typeof args[1] === 'object' && !Array.isArray(args[1])))) return guard(at(0));
    throw new Unevaluable('sequence');
  }
  if (typeof head !== 'string') throw new Unevaluable('applied expression');
  if (head === 'Sum' || head === 'Product') return guard(bigOperator(head, args, env, state, depth));
  const values = args.map((_, k) => at(k));
  const result = apply(head, values);
  if (result.im !== 0 && head !== 'Complex' && values.every((v) => v.im === 0)) state.leftReals = true;
  return result;
}

function apply(head: string, v: readonly Complex[]): Complex {
  const unary = UNARY[head];
  if (unary && v.length === 1) return guard(unary(v[0]!));
  const [a = C.complex(Number.NaN), b = C.complex(Number.NaN)] = v;
  switch (head) {
    case 'Add':
      return guard(v.reduce(C.add, C.complex(0)));
    case 'Subtract':
      return guard(v.length === 1 ? C.neg(a) : v.slice(1).reduce(C.sub, a));
    case 'Multiply':
    case 'InvisibleOperator':
      return guard(v.reduce(C.mul, C.complex(1)));
    case 'Divide':
    case 'Rational':
      return guard(v.length === 2 ? C.div(a, b) : a);
    case 'Power':
      return guard(C.pow(a, b));
    case 'Root':
      return guard(C.root(a, b.re));
    case 'Log':
      return guard(C.div(C.log(a), v.length === 2 ? C.log(b) : C.complex(Math.LN10)));
    case 'Complex':
      return guard(C.complex(a.re, b.re));
    case 'Factorial':
      return factorial(a);
    case 'Binomial':
      return guard(binomial(a, b));
    case 'Max':
    case 'Min':
      if (v.some((z) => z.im !== 0)) throw new Unevaluable('complex extremum');
      return C.complex((head === 'Max' ? Math.max : Math.min)(...v.map((z) => z.re)));
    default:
      throw new Unevaluable(`unknown head ${head}`);
  }
}

function symbolValue(name: string, env: ReadonlyMap<string, Complex>): Complex {
  const bound = env.get(name);
  if (bound) return bound;
  const constant = CONSTANTS[name] ?? INFINITIES[name];
  if (constant) return constant; // an infinity survives only unwrapped or negated: guard() stops it elsewhere
  throw new Unevaluable(`unbound symbol ${name}`);
}

// Any non-finite intermediate is an overflow or a pole, never a value: two power towers that
// both overflow to +∞ must not compare equal.
function guard(z: Complex): Complex {
  if (!C.isFiniteComplex(z)) throw new Unevaluable('overflow', true);
  return z;
}

// A factorial or binomial of a real non-integer (a sample point of `n!`) is valued through Γ.
function factorial(z: Complex): Complex {
  if (z.im !== 0) throw new Unevaluable('factorial of a complex number');
  if (z.re > MAX_FACTORIAL) throw new Unevaluable('overflow', true);
  if (!Number.isInteger(z.re)) return realGamma(z.re + 1);
  if (z.re < 0) throw new Unevaluable('factorial of a negative integer');
  let result = 1;
  for (let k = 2; k <= z.re; k++) result *= k;
  return C.complex(result);
}

function realGamma(x: number): Complex {
  const value = gamma(x);
  if (Number.isNaN(value)) throw new Unevaluable('pole of the gamma function');
  return guard(C.complex(value));
}

function binomial(n: Complex, k: Complex): Complex {
  if (n.im !== 0 || k.im !== 0) throw new Unevaluable('binomial of complex numbers');
  if (!Number.isInteger(k.re) && Math.abs(n.re) <= MAX_FACTORIAL && Math.abs(k.re) <= MAX_FACTORIAL) {
    return C.div(realGamma(n.re + 1), C.mul(realGamma(k.re + 1), realGamma(n.re - k.re + 1)));
  }
  if (!Number.isInteger(k.re) || k.re < 0 || k.re > 10_000) throw new Unevaluable('binomial');
  let result = 1;
  for (let j = 1; j <= k.re; j++) result = (result * (n.re - k.re + j)) / j;
  return C.complex(Math.round(result) === result || !Number.isInteger(n.re) ? result : Math.round(result));
}

function bigOperator(head: string, args: readonly MathJson[], env: ReadonlyMap<string, Complex>, state: WalkState, depth: number): Complex {
  const [body, limits] = args;
  if (!Array.isArray(limits) || limits.length !== 4 || typeof limits[1] !== 'string') throw new Unevaluable('unbounded big operator');
  const index = limits[1] as string;
  const lo = walk(limits[2] as MathJson, env, state, depth + 1);
  const hi = walk(limits[3] as MathJson, env, state, depth + 1);
  if (!Number.isInteger(lo.re) || !Number.isInteger(hi.re) || hi.re - lo.re > MAX_TERMS) throw new Unevaluable('too many terms', true);
  let acc = C.complex(head === 'Sum' ? 0 : 1);
  const inner = new Map(env);
  for (let k = lo.re; k <= hi.re; k++) {
    inner.set(index, C.complex(k));
    const term = walk(body as MathJson, inner, state, depth + 1);
    acc = head === 'Sum' ? C.add(acc, term) : C.mul(acc, term);
  }
  return acc;
}

/** Free symbols of an expression (constants and big-operator indices excluded). */
export function freeSymbols(json: MathJson, out: Set<string> = new Set(), depth = 0): Set<string> {
  if (depth > MAX_DEPTH) return out;
  if (typeof json === 'string') {
    if (!(json in CONSTANTS) && !(json in INFINITIES)) out.add(json);
  } else if (Array.isArray(json)) {
    const [head, ...args] = json as readonly MathJson[];
    for (const arg of args) freeSymbols(arg, out, depth + 1);
    if ((head === 'Sum' || head === 'Product') && Array.isArray(args[1]) && typeof args[1][1] === 'string') out.delete(args[1][1] as string);
  }
  return out;
}
