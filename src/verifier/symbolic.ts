import { ComputeEngine } from '@cortex-js/compute-engine';
import { LatexSyntax } from '@cortex-js/compute-engine/latex-syntax';
import { type Complex, complex, magnitude, sub } from './complex.js';
import { type MathJson, Unevaluable, evaluate, freeSymbols } from './evaluate.js';

/**
 * LaTeX → MathJSON with compute-engine 0.140.0's standalone parser (about 0.2 ms a parse), and
 * symbolic equivalence as identity testing: two expressions are equal when they agree at
 * several points, complex arithmetic included. The full engine's canonical form is the
 * fallback for expressions our evaluator cannot value.
 */
const syntax = new LatexSyntax();
let engine: ComputeEngine | undefined;
let canonicalUses = 0;
const ENGINE_REUSE = 5000;

const CACHE_LIMIT = 512;
const cache = new Map<string, MathJson | null>();

/** MathJSON for the LaTeX, or null when the parser reports an error. Results are cached. */
export function parseLatex(latex: string): MathJson | null {
  const hit = cache.get(latex);
  if (hit !== undefined) return hit;
  let json: MathJson | null = null;
  try {
    const parsed = syntax.parse(latex) as MathJson | null;
    json = parsed === null || containsError(parsed, 0) ? null : parsed;
  } catch {
    json = null;
  }
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(latex, json);
  return json;
}

function containsError(json: MathJson, depth: number): boolean {
  if (!Array.isArray(json)) return false;
  if (json[0] === 'Error' || depth > 200) return true;
  return (json as readonly MathJson[]).some((part) => containsError(part, depth + 1));
}

export type Outcome = { ok: Complex; leftReals: boolean } | { overflow: true } | { unknown: string };

export function tryEvaluate(json: MathJson, env: ReadonlyMap<string, Complex>): Outcome {
  try {
    const { value, leftReals } = evaluate(json, env);
    return { ok: value, leftReals };
  } catch (error) {
    if (error instanceof Unevaluable) return error.overflow ? { overflow: true } : { unknown: error.reason };
    if (error instanceof RangeError) return { unknown: error.message };
    throw error;
  }
}

/** Deterministic sample points: positive and negative values, far from 0 and from each other. */
export function samplePoints(symbols: readonly string[], count: number): Map<string, Complex>[] {
  let seed = 0x9e3779b9;
  const next = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const points: Map<string, Complex>[] = [];
  for (let j = 0; j < count; j++) {
    const env = new Map<string, Complex>();
    for (const name of symbols) env.set(name, complex((j % 3 === 2 ? -1 : 1) * (0.35 + 2.4 * next())));
    points.push(env);
  }
  return points;
}

export const POINT_REL_TOL = 1e-8;

export function closeAt(a: Complex, b: Complex): boolean {
  return magnitude(sub(a, b)) <= POINT_REL_TOL * Math.max(1, magnitude(a), magnitude(b));
}

/**
 * Identity test for expressions with free symbols: true / false, or null when a side has
 * no numeric value we trust (then the caller falls back to the canonical form).
 */
export function agreeEverywhere(gold: MathJson, pred: MathJson): boolean | null {
  const symbols = [...freeSymbols(gold, freeSymbols(pred))].sort();
  let usable = 0;
  for (const env of samplePoints(symbols, 6)) {
    const a = tryEvaluate(gold, env);
    const b = tryEvaluate(pred, env);
    if ('unknown' in a || 'unknown' in b) return null;
    if ('overflow' in a && 'overflow' in b) continue;
    if ('overflow' in a || 'overflow' in b) return false;
    // Outside a real domain (ln x at x < 0) real identities such as ln(xy) = ln x + ln y fail: skip the point.
    if (a.leftReals || b.leftReals) continue;
    if (!closeAt(a.ok, b.ok)) return false;
    usable++;
  }
  return usable >= 2 ? true : null;
}

/** Builds the compute engine now rather than inside the first budgeted check (about 0.4 s). */
export function warmUpSymbolic(): void {
  engine ??= new ComputeEngine();
  syntax.parse('\\frac{1}{2}+\\sin x');
}

/** Canonical forms compared by compute-engine, for what the evaluator cannot value. */
export function canonicallySame(gold: MathJson, pred: MathJson): boolean {
  if (hasTower(gold, 0) || hasTower(pred, 0)) return false;
  // The engine remembers every symbol it boxes: start a fresh one now and then so a long-lived
  // worker's memory stays bounded.
  if (++canonicalUses % ENGINE_REUSE === 0) engine = undefined;
  engine ??= new ComputeEngine();
  try {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return engine.box(gold as any).isSame(engine.box(pred as any));
  } catch {
    return false;
  }
}

// A power in an exponent makes canonicalisation compute huge integers: never hand it over.
function hasTower(json: MathJson, depth: number): boolean {
  if (!Array.isArray(json) || depth > 50) return depth > 50;
  if (json[0] === 'Power' && JSON.stringify(json[2] ?? '').includes('Power')) return true;
  return (json as readonly MathJson[]).some((part) => hasTower(part, depth + 1));
}
