import { execFileSync } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProgram } from '../../src/agent/program-host.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { startVllm, stopStartedServers, TOOL_CALLER_MODEL, VLLM_PYTHON, type RunningVllm } from '../../src/stack/vllm-server.js';
import type { ToolChatMessage } from '../../src/tokens/tool-call-format.js';
import { functionTool, type ToolDefinition } from '../../src/tokens/tool-definitions.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { expectEnvironmentInvariants, storedSteps, type StoredStep } from '../integration/environment-rows.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { describeParity, exportFile, exportFolder, runParity, samplingLabel } from './parity-command.js';
import { startRecordingProxy } from './recording-proxy.js';

// An agent's tool call, token-exact against a real vLLM (issue 37). The model is the hand-written tiny Qwen3 of
// `make_tiny_model.py --tool-caller` (real Qwen3 vocabulary and chat template): after the generation prompt it writes
// `<tool_call>{"name":"roll[_die]","arguments":{"sides":6|12|10}}</tool_call><|im_end|>`, choosing at three
// branches. A program with plain fetch offers the two tools, runs the call it gets, sends the result back as a `tool`
// message and calls again. The test checks that the call came back parsed, that the second context is the first
// sequence extended by the tool message as the chat template renders it, that everything stored is what vLLM was sent
// and sent back, and that a trainer's recomputation (ratchet-parity) of every generated token matches the stored
// logprobs. One vLLM start; float32, as parity.real.ts serves, so the bounds are that file's.

const BOUNDS = ['--max-mean', '0.02', '--max-p99', '0.1'];
// Top-p 0.95 keeps only the call's tokens at T = 0.7 (make_tiny_model.py), so every sample is a well-formed call.
const OPTIONS: Partial<RolloutOptions> = { turns: 4, maxNewTokens: 32, temperature: 0.7, topP: 0.95 };
const TRAJECTORIES = 3;
/** Everything the model can write: a compact Hermes call of one of the two tools. */
const CALL_TEXT = /^<tool_call>\{"name":"(roll|roll_die)","arguments":\{"sides":(6|12|10)\}\}<\/tool_call><\|im_end\|>$/;

const TOOLS: ToolDefinition[] = ['roll', 'roll_die'].map((name) =>
  functionTool(
    name,
    { type: 'object', properties: { sides: { type: 'integer' } }, required: ['sides'] },
    'Rolls a die with the given number of sides.',
  ),
);

/** Two calls with plain fetch: the problem with two tools, then each call's result as a `tool` message. */
function toolProgram(received: string): string {
  return `
const { readFileSync, writeFileSync } = require('node:fs');
const path = require('node:path');
const tools = ${JSON.stringify(TOOLS)};
const call = async (messages) => {
  const response = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
    body: JSON.stringify({ model: process.env.RATCHET_MODEL, messages, tools }),
  });
  if (!response.ok) throw new Error(response.status + ' ' + (await response.text()));
  return (await response.json()).choices[0];
};
(async () => {
  const task = JSON.parse(readFileSync(process.env.RATCHET_TASK, 'utf8'));
  const messages = [{ role: 'user', content: task.problem + ' Roll a die first.' }];
  const first = await call(messages);
  messages.push(first.message);
  const calls = first.message.tool_calls ?? [];
  for (const toolCall of calls) {
    const { sides } = JSON.parse(toolCall.function.arguments);
    messages.push({ role: 'tool', tool_call_id: toolCall.id, content: 'The die shows ' + Math.ceil(sides / 2) + '.' });
  }
  const second = await call(messages);
  writeFileSync(path.join(${JSON.stringify(received)}, encodeURIComponent(task.trajectoryId) + '.json'), JSON.stringify({ first, second, sent: messages }));
  writeFileSync(process.env.RATCHET_RESULT, JSON.stringify({ reward: calls.length === 1 ? 1 : -1 }));
})().catch((error) => { console.error(error); process.exit(1); });
`;
}

/**
 * Prints, for each conversation on stdin, the first call's prompt (its first message and the tools, in the order the
 * program sent them) and the tokens the whole conversation's rendering has after the assistant turn's `<|im_end|>`.
 */
const REFERENCE_RENDERING = `
import json, sys
from transformers import AutoTokenizer
tokenizer = AutoTokenizer.from_pretrained(sys.argv[1])
prompts, cuts = [], []
for case in json.load(sys.stdin):
    for message in case["messages"]:  # a null content (a reply with only calls) is read as "", as vLLM's server does
        if message.get("content") is None:
            message["content"] = ""
    first = tokenizer.apply_chat_template(case["messages"][:1], tools=case["tools"], add_generation_prompt=True, tokenize=False)
    prompts.append(tokenizer.encode(first, add_special_tokens=False))
    text = tokenizer.apply_chat_template(case["messages"], tools=case["tools"], add_generation_prompt=True, tokenize=False)
    end = text.index("<|im_end|>", text.index("<|im_start|>assistant")) + len("<|im_end|>")
    cuts.append(tokenizer.encode(text[end:], add_special_tokens=False))
print(json.dumps({"prompts": prompts, "cuts": cuts}))
`;

interface Choice {
  finish_reason: string;
  message: { role: string; content: string | null; tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[] };
}
interface Received {
  first: Choice;
  second: Choice;
  sent: Array<{ role: string; content: string | null; tool_call_id?: string }>;
}

let stack: TestStack;
let vllm: RunningVllm;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let stopWorkers: () => Promise<void>;
let scratch: string;
let rows: ExportedTrajectory[] = [];
const steps = new Map<string, StoredStep[]>();
const received = new Map<string, Received>();
const statuses: string[] = [];

beforeAll(async () => {
  const started = performance.now();
  const since = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  scratch = await exportFolder();
  stack = await startTestStack();
  vllm = await startVllm({ model: TOOL_CALLER_MODEL, dtype: 'float32' });
  const serverUp = since();
  proxy = await startRecordingProxy(vllm.url);
  const programs: AgentProgram[] = [{ name: 'tool-caller', command: [process.execPath, '-e', toolProgram(scratch)] }];
  stopWorkers = await stack.startWorkers({ backend: new VllmBackend(proxy.url), agentPrograms: programs });
  const requests = stack.problems
    .slice(0, TRAJECTORIES)
    .map((problem) =>
      trajectoryRequest({ ...problem, environment: 'tool-caller' }, { trajectoryId: trajectoryId('agent-tool', problem.qid, 0), options: OPTIONS }),
    );
  const results = await runRollouts(stack.client, requests);
  console.log(`agent tool calls on vLLM: server up at ${serverUp}, ${requests.length} trajectories done at ${since()}`);
  for (const result of results) if (result.status !== 'completed') console.log(result);
  statuses.push(...results.map((r) => r.status));
  rows = await stack.exported('agent-tool/');
  for (const row of rows) {
    steps.set(row.trajectory_id, await storedSteps(stack.pool, row.trajectory_id));
    const file = path.join(scratch, `${encodeURIComponent(row.trajectory_id)}.json`);
    received.set(row.trajectory_id, JSON.parse(await readFile(file, 'utf8')) as Received);
  }
});

afterAll(async () => {
  await stopWorkers?.();
  await proxy?.close();
  await vllm?.stop();
  await stopStartedServers();
  await stack?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** What the server was sent and streamed back for a trajectory's turn (its first segment; none was resumed here). */
function servedTurn(id: string, turn: number) {
  for (let attempt = 0; attempt <= 3; attempt++) {
    const record = proxy.served(`${id}/${turn}/${attempt}/0`);
    if (record && record.end !== 'disconnect') return record;
  }
  return undefined;
}

/** A row's turn t: its whole sequence, where its output starts, and its output's logprobs. */
function turnOf(row: ExportedTrajectory, t: number) {
  const offset = row.seqlens.slice(0, t).reduce((a, b) => a + b, 0);
  const logprobOffset = offset - t;
  const length = row.seqlens[t]!;
  const contextLen = row.prompt_lens[t]!;
  return {
    sequence: row.packed_input_ids.slice(offset, offset + length),
    contextLen,
    logprobs: row.packed_logprobs.slice(logprobOffset + contextLen - 1, logprobOffset + length - 1),
  };
}

describe('an agent tool call against a real vLLM (hand-written tiny Qwen3 tool caller, float32)', () => {
  it("returns the model's tool call parsed, and the program's tool result extends the stored sequence as the template renders it", () => {
    expect(statuses).toEqual(Array(TRAJECTORIES).fill('completed'));
    const referenceCases: Array<{ messages: unknown[]; tools: unknown[]; prompt: number[]; stored: number[] }> = [];
    expect(rows).toHaveLength(TRAJECTORIES);
    for (const row of rows) {
      const rowSteps = steps.get(row.trajectory_id)!;
      const { first, second, sent } = received.get(row.trajectory_id)!;
      expectEnvironmentInvariants(row, stack.tokenizer, rowSteps);
      expect(row.seqlens).toHaveLength(2);
      expect(row.raw_rewards).toEqual([0, 1]);
      const [call1, call2] = [turnOf(row, 0), turnOf(row, 1)];
      const output1 = call1.sequence.slice(call1.contextLen);
      const text1 = stack.tokenizer.decodeAll(output1);
      console.log(
        `${row.trajectory_id}: call 1 wrote ${JSON.stringify(text1)} = [${output1.join(', ')}], logprobs [${call1.logprobs.map((l) => l.toFixed(4)).join(', ')}]`,
      );

      // (a) The model wrote a tool call and the program got it as `tool_calls`, parsed, with finish reason tool_calls.
      const [, name, sides] = CALL_TEXT.exec(text1) ?? [];
      expect(name, `call 1 wrote a tool call: ${text1}`).toBeDefined();
      expect(first.finish_reason).toBe('tool_calls');
      expect(first.message.tool_calls).toHaveLength(1);
      const toolCall = first.message.tool_calls![0]!;
      expect(toolCall).toMatchObject({ type: 'function', function: { name } });
      expect(JSON.parse(toolCall.function.arguments)).toEqual({ sides: Number(sides) });
      expect(rowSteps[0]!.verdict).toBe('tool_calls');
      expect(rowSteps[0]!.step!.info['reply']).toMatchObject({ tool_calls: first.message.tool_calls });
      // The second call gets a tool call too (the model writes one after every generation prompt).
      expect(second.finish_reason).toBe('tool_calls');
      expect(stack.tokenizer.decodeAll(turnOf(row, 1).sequence.slice(call2.contextLen))).toMatch(CALL_TEXT);

      // (b) Call 2 extended call 1's sequence (no fork) by the tool message, exactly as the chat template renders the
      // conversation the program sent, cut after the assistant turn's end (the model's own `<|im_end|>`).
      expect(rowSteps[0]!.step!.info['fork']).toBeUndefined();
      expect(rowSteps[0]!.step!.observations).toEqual([{ role: 'tool', tool_call_id: toolCall.id, content: sent[2]!.content }]);
      expect(call2.sequence.slice(0, call1.sequence.length)).toEqual(call1.sequence);
      const conversation: ToolChatMessage[] = [
        { role: 'user', content: sent[0]!.content! },
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ id: toolCall.id, type: 'function', function: { name: name!, arguments: { sides: Number(sides) } } }],
        },
        { role: 'tool', tool_call_id: toolCall.id, content: sent[2]!.content! },
      ];
      const rendered = stack.tokenizer.renderChat(conversation, true, { tools: TOOLS });
      const assistantEnd = rendered.indexOf('<|im_end|>', rendered.indexOf('<|im_start|>assistant')) + '<|im_end|>'.length;
      const feedback = stack.tokenizer.encode(rendered.slice(assistantEnd));
      expect(stack.tokenizer.decodeAll(feedback)).toMatch(
        /^\n<\|im_start\|>user\n<tool_response>\nThe die shows \d+\.\n<\/tool_response><\|im_end\|>\n<\|im_start\|>assistant\n$/,
      );
      expect(call2.sequence.slice(call1.sequence.length, call2.contextLen)).toEqual(feedback);
      referenceCases.push({
        messages: sent,
        tools: TOOLS,
        prompt: call1.sequence.slice(0, call1.contextLen),
        stored: call2.sequence.slice(call1.sequence.length, call2.contextLen),
      });
      // (c) Each stored context, output and logprob is what vLLM was sent and streamed back, for each turn.
      for (const [t, call] of [call1, call2].entries()) {
        const served = servedTurn(row.trajectory_id, t);
        expect(served, `${row.trajectory_id} turn ${t} went through the proxy`).toBeDefined();
        expect(served!.body['prompt']).toEqual(call.sequence.slice(0, call.contextLen));
        expect(served!.body).toMatchObject({ temperature: 0.7, top_p: 0.95 });
        expect(served!.sentIds).toEqual(call.sequence.slice(call.contextLen));
        expect(served!.sentLogprobs.map(Math.fround)).toEqual(call.logprobs);
      }
    }
    // The conversation as the program sent it, rendered by transformers' apply_chat_template (Python's Jinja, as vLLM's
    // own chat endpoint renders it) rather than Ratchet's: the same first prompt, the tools' schemas in the program's
    // key order (the stored request keeps it), and the same tool message cut.
    const reference = JSON.parse(
      execFileSync(VLLM_PYTHON, ['-c', REFERENCE_RENDERING, TOOL_CALLER_MODEL], {
        input: JSON.stringify(referenceCases),
        env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
      }).toString(),
    ) as { prompts: number[][]; cuts: number[][] };
    expect(reference.prompts).toEqual(referenceCases.map((c) => c.prompt));
    expect(reference.cuts).toEqual(referenceCases.map((c) => c.stored));
    // One generation per stored turn: none was generated twice.
    const generations = proxy
      .requests()
      .filter((r) => r.path === '/v1/completions')
      .map((r) => r.body as { prompt?: unknown; stream?: boolean })
      .filter(
        (body) =>
          body.stream && Array.isArray(body.prompt) && rows.some((row) => row.packed_prompts.every((id, i) => (body.prompt as number[])[i] === id)),
      );
    expect(generations).toHaveLength(2 * TRAJECTORIES);
    // The branches were sampled, not fixed: a branch token's logprob is that of a real choice (log 0.7, 0.3, 0.6, …).
    const branchLogprobs = rows.flatMap((row) => [0, 1].flatMap((t) => turnOf(row, t).logprobs)).filter((lp) => lp < -0.1);
    expect(branchLogprobs.length).toBeGreaterThanOrEqual(2 * TRAJECTORIES * 2);
  });

  it("recomputes every generated token's logprob, the tool call's included, with the trainer's model (ratchet-parity)", async () => {
    const file = await exportFile(scratch, rows, 'jsonl');
    const { code, report } = await runParity(['--model', TOOL_CALLER_MODEL, '--export', file, ...BOUNDS]);
    const label = samplingLabel(OPTIONS);
    const [stats, raw] = [report.by_sampling[label], report.raw_by_sampling[label]];
    console.log(describeParity(`agent tool calls ${JSON.stringify(OPTIONS)}`, stats, raw));
    console.log(`parity over ${stats!.tokens} tokens: mean |Δ| ${stats!.mean_abs}, max |Δ| ${stats!.max_abs}`);
    const generated = rows.reduce((sum, row) => sum + row.seqlens.reduce((s, len, t) => s + len - row.prompt_lens[t]!, 0), 0);
    expect(stats!.tokens).toBe(generated);
    expect(stats!.mean_abs).toBeLessThanOrEqual(0.02);
    expect(stats!.p99_abs).toBeLessThanOrEqual(0.1);
    // Processed, not raw: the model's raw distribution gives its likeliest token about 0.9 (logprob −0.1), the
    // sampled one (T = 0.7, top-p 0.95) all of it at every position but the branches.
    expect(raw!.mean_abs).toBeGreaterThan(0.05);
    expect(report.failures).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ rows: rows.length, unchecked_tokens: {}, rows_without_sampling: 0, outside_support: 0 });
  });
});
