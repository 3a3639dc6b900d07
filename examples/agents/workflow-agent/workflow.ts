/**
 * A calculator agent that is itself a Temporal workflow: each model call is an activity (`callModel`), each tool is an
 * activity (`calculator`, `unitConvert`), and the loop between them is this workflow, run by your own worker
 * (worker.ts) on your own task queue. Registered with Ratchet as `{ "name", "workflow": "calculatorAgent", "taskQueue" }`,
 * it runs as a trajectory's child workflow, and every model call it makes is one durable GPU turn of the trajectory.
 *
 * Deterministic, as any workflow is, and as a re-run agent must be: given the same answers it makes the same calls, one
 * at a time. Each reply goes back as it came (`reasoning_content`, `tool_calls`, Ratchet's `malformed_tool_calls`), so
 * the trajectory's token sequence is extended, never forked.
 */
import { proxyActivities } from '@temporalio/workflow';
import type * as activities from './activities.js';

/** What Ratchet starts the workflow with (docs/agent-programs.md): a process gets the same in its environment. */
export interface AgentWorkflowInput {
  /** The trajectory's OpenAI-compatible endpoint: POST `${baseUrl}/chat/completions`. */
  baseUrl: string;
  /** This run's key, sent as `Authorization: Bearer`. */
  apiKey: string;
  model: string;
  task: { trajectoryId: string; qid: string; problem: string; args: unknown; seed: number; attempt: number };
}

/** At most this many model calls (GPU turns) per run, malformed-call retries included. */
const MAX_MODEL_CALLS = 6;

const SYSTEM =
  'You solve math problems. You may use the calculator for arithmetic and unit_convert for units. ' +
  'When you are done, give the final answer as \\boxed{...}.';

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'calculator',
      description: 'Evaluate an arithmetic expression: numbers, + - * / % ^ and parentheses.',
      parameters: {
        type: 'object',
        properties: { expression: { type: 'string', description: 'for example "(3 + 4) * 2 ^ 3"' } },
        required: ['expression'],
      },
    },
  },
  {
    type: 'function',
    function: {
      name: 'unit_convert',
      description:
        'Convert a quantity between units of length, mass, time, volume or temperature (m, km, ft, mi, g, kg, lb, s, min, h, l, gal, c, f, k, …).',
      parameters: {
        type: 'object',
        properties: {
          value: { type: 'number' },
          from: { type: 'string', description: 'unit to convert from' },
          to: { type: 'string', description: 'unit to convert to' },
        },
        required: ['value', 'from', 'to'],
      },
    },
  },
];

// A model call is one GPU turn, which may take minutes: it heartbeats, so a call whose worker died is noticed in 5 s and
// made again on another worker; Ratchet answers the same request from the store instead of generating it twice. A 4xx
// (a refused call) fails at once; a call that cannot reach the endpoint fails the run after a few tries, and Ratchet
// runs the agent again with a new endpoint.
const model = proxyActivities<typeof activities>({
  startToCloseTimeout: '10 minutes',
  heartbeatTimeout: '5 seconds',
  retry: { initialInterval: '1 second', maximumAttempts: 5 },
});
const tools = proxyActivities<typeof activities>({ startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } });

/** The agent: call the model, run the tools it asks for, until it answers; returns `{ answer }` for Ratchet to judge. */
export async function calculatorAgent({ baseUrl, apiKey, model: modelName, task }: AgentWorkflowInput): Promise<{ answer: string }> {
  const messages: activities.ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: task.problem },
  ];
  let answer = '';
  for (let call = 0; call < MAX_MODEL_CALLS; call += 1) {
    const reply = await model.callModel({ baseUrl, apiKey, body: { model: modelName, messages, tools: TOOLS } });
    messages.push(reply);
    answer = typeof reply.content === 'string' ? reply.content : '';
    // A turn with a malformed tool call comes back as text with `malformed_tool_calls`: answer it as a tool loop would.
    if (reply.malformed_tool_calls?.length) {
      messages.push({ role: 'user', content: reply.malformed_tool_calls.map(({ observation }) => observation).join('\n') });
      continue;
    }
    if (!reply.tool_calls?.length) break;
    for (const toolCall of reply.tool_calls) messages.push({ role: 'tool', tool_call_id: toolCall.id, content: await runTool(toolCall) });
  }
  return { answer };
}

/** One tool call, each tool an activity; arguments that are not JSON are answered, not thrown. */
async function runTool({ function: { name, arguments: text } }: activities.ToolCall): Promise<string> {
  let args: Record<string, unknown>;
  try {
    args = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return `error: the arguments are not JSON: ${text}`;
  }
  if (name === 'calculator') return tools.calculator({ expression: String(args['expression'] ?? '') });
  if (name === 'unit_convert')
    return tools.unitConvert({ value: Number(args['value']), from: String(args['from'] ?? ''), to: String(args['to'] ?? '') });
  return `error: no tool named ${name}`;
}
