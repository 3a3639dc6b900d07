import { MAX_OBSERVATION_CHARS, MAX_STATE_BYTES } from './bounds.js';
import { EnvironmentFailure, type EnvironmentStart, type JsonValue, type ObservationMessage, type StepResult } from './environment.js';

/** A verdict is a label for the UI and metrics, not a text. */
export const MAX_VERDICT_CHARS = 64;

/**
 * Checks what an environment answered (its own worker's, over the wire, or a user's TypeScript): a malformed
 * answer is the environment's bug, never a reward. Fails naming the field (and the size, for one too large),
 * as `data`: another attempt of the same code on the same input answers the same.
 */
export function checkStepResult(value: unknown, where: string): StepResult {
  const result = record(value, where);
  const observations = messages(result.observations, `${where}.observations`, 0);
  if (typeof result.reward !== 'number' || !Number.isFinite(result.reward))
    malformed(`${where}.reward must be a finite number, got ${show(result.reward)}`);
  if (typeof result.success !== 'boolean') malformed(`${where}.success must be a boolean, got ${show(result.success)}`);
  if (typeof result.done !== 'boolean') malformed(`${where}.done must be a boolean, got ${show(result.done)}`);
  if (typeof result.verdict !== 'string' || result.verdict.length === 0 || result.verdict.length > MAX_VERDICT_CHARS) {
    malformed(`${where}.verdict must be a label of 1 to ${MAX_VERDICT_CHARS} characters, got ${show(result.verdict)}`);
  }
  for (const key of ['predicted', 'detail'] as const) {
    if (result[key] !== undefined && result[key] !== null && typeof result[key] !== 'string')
      malformed(`${where}.${key} must be a string or null, got ${show(result[key])}`);
  }
  if (result.info !== undefined && result.info !== null) jsonOnly(record(result.info, `${where}.info`), `${where}.info`);
  observationSize(observations, `${where}.observations`);
  if (result.state !== undefined) stateSize(result.state, `${where}.state`);
  return {
    observations,
    reward: result.reward as number,
    success: result.success as boolean,
    done: result.done as boolean,
    verdict: result.verdict as string,
    predicted: (result.predicted as string | null | undefined) ?? null,
    ...(typeof result.detail === 'string' ? { detail: result.detail } : {}),
    info: (result.info ?? {}) as { [key: string]: JsonValue },
    ...(result.state === undefined ? {} : { state: result.state as JsonValue }),
  };
}

/** Checks an episode's start: at least one message, or a rendered prompt. */
export function checkStart(value: unknown, where: string): EnvironmentStart {
  const start = record(value, where);
  if (start.state !== undefined) stateSize(start.state, `${where}.state`);
  const state = start.state === undefined ? {} : { state: start.state as JsonValue };
  if (typeof start.renderedPrompt === 'string' && start.renderedPrompt.length > 0) return { renderedPrompt: start.renderedPrompt, ...state };
  const first = messages(start.messages, `${where}.messages`, 1);
  observationSize(first, `${where}.messages`);
  return { messages: first, ...state };
}

function observationSize(list: readonly ObservationMessage[], where: string): void {
  const chars = list.reduce((sum, m) => sum + m.content.length, 0);
  if (chars > MAX_OBSERVATION_CHARS) malformed(`${where} hold ${chars} characters, over the ${MAX_OBSERVATION_CHARS} a step may add`);
}

/** The state passes through the workflow's history to the next step: JSON that comes back as itself, and small. */
function stateSize(state: unknown, where: string): void {
  jsonOnly(state, where);
  const bytes = Buffer.byteLength(JSON.stringify(state), 'utf8');
  if (bytes > MAX_STATE_BYTES)
    malformed(
      `${where} is ${bytes} bytes of JSON, over the ${MAX_STATE_BYTES} a state may hold (keep large things in the environment, keyed by the trajectory id)`,
    );
}

/** Fails on anything JSON would not give back as itself: undefined, functions, BigInt, NaN, class instances, cycles. */
function jsonOnly(value: unknown, where: string, seen: Set<object> = new Set()): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) malformed(`${where} is ${String(value)}, which JSON cannot hold`);
    return;
  }
  if (typeof value !== 'object') malformed(`${where} is a ${typeof value}, not a JSON value`);
  if (seen.has(value)) malformed(`${where} refers back to itself: JSON cannot hold a cycle`);
  seen.add(value);
  if (Array.isArray(value)) {
    value.forEach((item, i) => jsonOnly(item, `${where}[${i}]`, seen));
  } else {
    const prototype = Object.getPrototypeOf(value);
    if (prototype !== Object.prototype && prototype !== null)
      malformed(`${where} is a ${value.constructor?.name ?? 'class instance'}, not a plain JSON object`);
    for (const [key, item] of Object.entries(value)) jsonOnly(item, `${where}.${key}`, seen);
  }
  seen.delete(value);
}

function messages(value: unknown, where: string, atLeast: number): ObservationMessage[] {
  if (!Array.isArray(value)) malformed(`${where} must be a list of {role, content} messages, got ${show(value)}`);
  if (value.length < atLeast) malformed(`${where} must hold at least ${atLeast} message`);
  return value.map((item, i) => {
    const message = record(item, `${where}[${i}]`);
    if (typeof message.role !== 'string' || !/^[a-z_]{1,32}$/.test(message.role))
      malformed(`${where}[${i}].role must be a chat role such as user or tool, got ${show(message.role)}`);
    if (typeof message.content !== 'string') malformed(`${where}[${i}].content must be a string, got ${show(message.content)}`);
    return { role: message.role, content: message.content };
  });
}

function record(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) malformed(`${where} must be an object, got ${show(value)}`);
  return value as Record<string, unknown>;
}

function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

function malformed(message: string): never {
  throw new EnvironmentFailure(`malformed environment answer: ${message}`, 'data');
}
