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
import { calculate, convert, UNITS } from './calculator-tools.mjs';

/** At most this many model calls (GPU turns) per run, malformed-call retries included. */
const MAX_MODEL_CALLS = 6;
const SYSTEM = [
  'You solve math problems. You may use the calculator for arithmetic and unit_convert for units.',
  'When you are done, give the final answer as \\boxed{...}.',
].join(' ');

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
