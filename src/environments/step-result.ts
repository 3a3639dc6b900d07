import { EnvironmentFailure, type EnvironmentStart, type JsonValue, type ObservationMessage, type StepResult } from './environment.js';

/** A verdict is a label for the UI and metrics, not a text. */
export const MAX_VERDICT_CHARS = 64;

/**
 * Checks what an environment answered (its own worker's, over the wire, or a user's TypeScript): a malformed
 * answer is the environment's bug, never a reward. Fails naming the field, non-retryably (another attempt of the
 * same code answers the same).
 */
export function checkStepResult(value: unknown, where: string): StepResult {
  const result = record(value, where);
  const observations = messages(result.observations, `${where}.observations`, 0);
  if (typeof result.reward !== 'number' || !Number.isFinite(result.reward)) malformed(`${where}.reward must be a finite number, got ${show(result.reward)}`);
  if (typeof result.success !== 'boolean') malformed(`${where}.success must be a boolean, got ${show(result.success)}`);
  if (typeof result.done !== 'boolean') malformed(`${where}.done must be a boolean, got ${show(result.done)}`);
  if (typeof result.verdict !== 'string' || result.verdict.length === 0 || result.verdict.length > MAX_VERDICT_CHARS) {
    malformed(`${where}.verdict must be a label of 1 to ${MAX_VERDICT_CHARS} characters, got ${show(result.verdict)}`);
  }
  for (const key of ['predicted', 'detail'] as const) {
    if (result[key] !== undefined && result[key] !== null && typeof result[key] !== 'string') malformed(`${where}.${key} must be a string or null, got ${show(result[key])}`);
  }
  if (result.info !== undefined && result.info !== null) record(result.info, `${where}.info`);
  return {
    observations, reward: result.reward as number, success: result.success as boolean, done: result.done as boolean, verdict: result.verdict as string,
    predicted: (result.predicted as string | null | undefined) ?? null,
    ...(typeof result.detail === 'string' ? { detail: result.detail } : {}),
    info: (result.info ?? {}) as { [key: string]: JsonValue },
    ...(result.state === undefined ? {} : { state: result.state as JsonValue }),
  };
}

/** Checks an episode's start: at least one message, or a rendered prompt. */
export function checkStart(value: unknown, where: string): EnvironmentStart {
  const start = record(value, where);
  const state = start.state === undefined ? {} : { state: start.state as JsonValue };
  if (typeof start.renderedPrompt === 'string' && start.renderedPrompt.length > 0) return { renderedPrompt: start.renderedPrompt, ...state };
  return { messages: messages(start.messages, `${where}.messages`, 1), ...state };
}

function messages(value: unknown, where: string, atLeast: number): ObservationMessage[] {
  if (!Array.isArray(value)) malformed(`${where} must be a list of {role, content} messages, got ${show(value)}`);
  if (value.length < atLeast) malformed(`${where} must hold at least ${atLeast} message`);
  return value.map((item, i) => {
    const message = record(item, `${where}[${i}]`);
    if (typeof message.role !== 'string' || !/^[a-z_]{1,32}$/.test(message.role)) malformed(`${where}[${i}].role must be a chat role such as user or tool, got ${show(message.role)}`);
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
  throw new EnvironmentFailure(`malformed environment answer: ${message}`, 'infrastructure', { retryable: false });
}
