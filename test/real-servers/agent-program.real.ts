import { rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentProgram } from '../../src/agent/program-host.js';
import { runRollouts } from '../../src/client/run-rollouts.js';
import { trajectoryId, trajectoryRequest } from '../../src/client/submit.js';
import { VllmBackend } from '../../src/policy/vllm-backend.js';
import { pythonPackageEnv } from '../../src/stack/python-package-env.js';
import { PEAKED_MODEL, startVllm, stopStartedServers, type RunningVllm } from '../../src/stack/vllm-server.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import type { RolloutOptions } from '../../src/trajectory/options.js';
import { expectEnvironmentInvariants, storedSteps, type StoredStep } from '../integration/environment-rows.js';
import { startTestStack, type TestStack } from '../integration/local-stack.js';
import { describeParity, exportFile, exportFolder, runParity, samplingLabel } from './parity-command.js';
import { startRecordingProxy } from './recording-proxy.js';

// Agent programs (issue 37) against a real vLLM: each model call a program makes is a GPU turn served by the real
// server, stored token for token as the server was sent and answered, and a trainer's recomputation of the stored rows
// (ratchet-parity, HF transformers) matches the stored logprobs. The peaked tiny Qwen3 in float32, as parity.real.ts
// serves it, so the parity bounds are that file's. A random-weight model never writes a tool call, so the examples
// end after one call (agent-tool-call.real.ts has a model that does); a third program, written for this file, asks a
// follow-up (its reply plus a user message), so a second turn's context is the first turn's sequence extended by what
// a program sent back.

const ROOT = path.resolve(import.meta.dirname, '../..');
// The bounds, in float32: what parity.real.ts enforces.
const BOUNDS = ['--max-mean', '0.02', '--max-p99', '0.1'];
// Processed logprobs (temperature and top-p applied), few tokens: one core decodes the tiny model at ~90 tokens/s.
const OPTIONS: Partial<RolloutOptions> = { turns: 4, maxNewTokens: 96, temperature: 0.7, topP: 0.95 };

/** Two plain calls with no SDK: the problem, then the reply sent back as received with a user message after it. */
const FOLLOW_UP = `
const { readFileSync, writeFileSync } = require('node:fs');
const call = async (messages) => {
  const response = await fetch(process.env.OPENAI_BASE_URL + '/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer ' + process.env.OPENAI_API_KEY },
    body: JSON.stringify({ model: process.env.RATCHET_MODEL, messages }),
  });
  if (!response.ok) throw new Error(response.status + ' ' + (await response.text()));
  return (await response.json()).choices[0].message;
};
(async () => {
  const messages = [{ role: 'user', content: JSON.parse(readFileSync(process.env.RATCHET_TASK, 'utf8')).problem }];
  const { role, content, reasoning_content } = await call(messages);
  messages.push({ role, content, ...(reasoning_content ? { reasoning_content } : {}) });
  messages.push({ role: 'user', content: 'Check your answer and give it as \\\\boxed{...}.' });
  const last = await call(messages);
  writeFileSync(process.env.RATCHET_RESULT, JSON.stringify({ answer: last.content ?? '' }));
})().catch((error) => { console.error(error); process.exit(1); });
`;

let stack: TestStack;
let vllm: RunningVllm;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let stopWorkers: () => Promise<void>;
let scratch: string;
let rows: ExportedTrajectory[] = [];
const steps = new Map<string, StoredStep[]>();
const statuses: string[] = [];

beforeAll(async () => {
  const started = performance.now();
  const since = () => `${((performance.now() - started) / 1000).toFixed(0)} s`;
  scratch = await exportFolder();
  const python = await pythonPackageEnv(path.join(ROOT, '.ratchet'));
  stack = await startTestStack();
  vllm = await startVllm({ model: PEAKED_MODEL, dtype: 'float32' });
  const serverUp = since();
  proxy = await startRecordingProxy(vllm.url);
  const backend = new VllmBackend(proxy.url);
  const programs: AgentProgram[] = [
    { name: 'ts-calculator', command: [process.execPath, path.join(ROOT, 'examples/agents/ts-agent.mjs')] },
    { name: 'py-calculator', command: [python, path.join(ROOT, 'examples/agents/calculator_agent.py')] },
    { name: 'follow-up', command: [process.execPath, '-e', FOLLOW_UP] },
  ];
  stopWorkers = await stack.startWorkers({ backend, agentPrograms: programs });
  const requests = [
    ...agentRequests('agent-ts', 'ts-calculator', 0, 2),
    ...agentRequests('agent-py', 'py-calculator', 2, 1),
    ...agentRequests('agent-follow', 'follow-up', 3, 1),
  ];
  const workersUp = since();
  const results = await runRollouts(stack.client, requests);
  console.log(`agent programs on vLLM: server up at ${serverUp}, workers at ${workersUp}, ${requests.length} trajectories done at ${since()}`);
  for (const result of results) if (result.status !== 'completed') console.log(result);
  statuses.push(...results.map((r) => r.status));
  rows = await stack.exported('agent-');
  for (const row of rows) steps.set(row.trajectory_id, await storedSteps(stack.pool, row.trajectory_id));
});

afterAll(async () => {
  await stopWorkers?.();
  await proxy?.close();
  await vllm?.stop();
  await stopStartedServers();
  await stack?.stop();
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

function agentRequests(run: string, environment: string, from: number, count: number) {
  return stack.problems
    .slice(from, from + count)
    .map((problem) => trajectoryRequest({ ...problem, environment }, { trajectoryId: trajectoryId(run, problem.qid, 0), options: OPTIONS }));
}

/** What the server was sent and streamed back for a trajectory's turn (its first segment; none was resumed here). */
function servedTurn(id: string, turn: number) {
  for (let attempt = 0; attempt <= 3; attempt++) {
    const record = proxy.served(`${id}/${turn}/${attempt}/0`);
    if (record && record.end !== 'disconnect') return record;
  }
  return undefined;
}

describe('agent programs against a real vLLM (peaked tiny Qwen3, float32)', () => {
  it('completes every program, each call a turn whose stored context, tokens and logprobs are what vLLM was sent and sent back', () => {
    expect(statuses).toEqual(['completed', 'completed', 'completed', 'completed']);
    expect(rows.map((r) => r.environment).sort()).toEqual(['follow-up', 'py-calculator', 'ts-calculator', 'ts-calculator']);
    let turns = 0;
    for (const row of rows) {
      const rowSteps = steps.get(row.trajectory_id)!;
      console.log(
        `${row.trajectory_id} (${row.environment}): ${row.seqlens.length} call(s), outputs ${row.seqlens.map((l, t) => l - row.prompt_lens[t]!).join(', ')} ` +
          `tokens, verdicts ${rowSteps.map((s) => s.verdict).join(', ')}, rewards ${row.raw_rewards.join(', ')}`,
      );
      expectEnvironmentInvariants(row, stack.tokenizer, rowSteps);
      expect(row).toMatchObject({ temperature: 0.7, top_p: 0.95 });
      expect(rowSteps.at(-1)!.step!.done).toBe(true);
      let offset = 0;
      let logprobOffset = 0;
      row.seqlens.forEach((length, t) => {
        const sequence = row.packed_input_ids.slice(offset, offset + length);
        const contextLen = row.prompt_lens[t]!;
        const served = servedTurn(row.trajectory_id, t);
        expect(served, `${row.trajectory_id} turn ${t} went through the proxy`).toBeDefined();
        expect(served!.body['prompt']).toEqual(sequence.slice(0, contextLen));
        expect(served!.body).toMatchObject({ temperature: 0.7, top_p: 0.95 });
        expect(served!.sentIds).toEqual(sequence.slice(contextLen));
        expect(served!.sentLogprobs.map(Math.fround)).toEqual(row.packed_logprobs.slice(logprobOffset + contextLen - 1, logprobOffset + length - 1));
        offset += length;
        logprobOffset += length - 1;
        turns++;
      });
    }
    // No turn was generated twice: the server got one streamed completion per stored turn.
    const prompts = rows.map((row) => row.packed_prompts);
    const generations = proxy
      .requests()
      .filter((r) => r.path === '/v1/completions')
      .map((r) => r.body as { prompt?: unknown; stream?: boolean })
      .filter((body) => body.stream && Array.isArray(body.prompt) && prompts.some((p) => p.every((id, i) => (body.prompt as number[])[i] === id)));
    expect(generations).toHaveLength(turns);
    // The follow-up's second context is its first sequence plus the user message (checked token for token above).
    expect(rows.find((row) => row.environment === 'follow-up')!.seqlens).toHaveLength(2);
  });

  it("recomputes the stored logprobs with the trainer's model (ratchet-parity) within mean |Δ| 0.02 and p99 0.1", async () => {
    const file = await exportFile(scratch, rows, 'jsonl');
    const { code, report } = await runParity(['--model', PEAKED_MODEL, '--export', file, ...BOUNDS]);
    const label = samplingLabel(OPTIONS);
    const [stats, raw] = [report.by_sampling[label], report.raw_by_sampling[label]];
    console.log(describeParity(`agent programs ${JSON.stringify(OPTIONS)}`, stats, raw));
    const generated = rows.reduce((sum, row) => sum + row.seqlens.reduce((s, len, t) => s + len - row.prompt_lens[t]!, 0), 0);
    expect(stats!.tokens).toBe(generated);
    expect(stats!.mean_abs).toBeLessThanOrEqual(0.02);
    expect(stats!.p99_abs).toBeLessThanOrEqual(0.1);
    // The peaked model tells the row's sampling from the raw distribution: the stored logprobs are the processed ones
    // (the GPU worker's start-up probe also refuses a server that returns raw logprobs for T = 0.7).
    expect(raw!.mean_abs).toBeGreaterThan(0.3);
    expect(report.failures).toEqual([]);
    expect(code).toBe(0);
    expect(report).toMatchObject({ rows: rows.length, unchecked_tokens: {}, rows_without_sampling: 0, outside_support: 0 });
  });
});
