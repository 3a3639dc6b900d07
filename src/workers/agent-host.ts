import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { WorkflowNotFoundError, WorkflowUpdateFailedError, type Client } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type pg from 'pg';
import { agentEndpoint, type AgentCalls, type OpenAgentTrajectory } from '../agent/agent-endpoint.js';
import { CallRefusedError, UnknownTrajectoryError } from '../agent/agent-error-response.js';
import { agentKey } from '../agent/agent-key.js';
import type { ChatCompletionRequest } from '../agent/chat-completion-request.js';
import { agentReply, chatCompletion, type ChatCompletion } from '../agent/chat-completion-response.js';
import type { AgentProgram, AgentProgramHost } from '../agent/program-host.js';
import { ProgramRunCalls } from '../agent/program-run-calls.js';
import { requestHash } from '../agent/request-hash.js';
import { log } from '../logging.js';
import { saveAgentRequest } from '../store/write/agent-requests.js';
import { decodeFloat32, decodeInt32 } from '../tokens/token-codec.js';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { toolCallFormatOf } from '../tokens/tool-call-formats.js';
import { toolSet } from '../tokens/tool-definitions.js';
import { AgentCallRefusal, agentCallUpdate, type AgentCallAnswer } from '../workflows/agent-call-update.js';

/** Node's longest timer (about 24.8 days): a longer one fires at once, so a run's deadline past it is cut to it. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface AgentHostOptions {
  programs: readonly AgentProgram[];
  pool: pg.Pool;
  /** A Temporal client on the CPU worker's namespace: each call is an Update of its trajectory's workflow. */
  client: Client;
  tokenizer: ModelTokenizer;
}

/** Where an agent endpoint listens (loopback, a port of the system's choosing, unless given), and the URL agents use. */
export interface AgentEndpointAddress {
  hostname?: string;
  port?: number;
  /** The URL agents reach the endpoint at (behind a proxy, another host's name); the listening address unless given. */
  url?: string;
}

/** A CPU worker's agent programs and the endpoint they call: what the program activity and the endpoint share. */
export interface AgentHost extends AgentProgramHost {
  /** The endpoint's address, e.g. http://127.0.0.1:40123. */
  readonly url: string;
  readonly programs: ReadonlyMap<string, AgentProgram>;
  close(): Promise<void>;
}

/**
 * Starts the endpoint a CPU worker's agent programs call (src/agent/agent-endpoint.ts) and the bookkeeping of their
 * runs. Each call is asked of the trajectory's workflow as a Temporal Update (src/workflows/agent-episode.ts); the
 * answer is read back from the turn the workflow stored. The keys are made under a secret drawn at start: a key only
 * has to outlive the runs this worker opened (a process it launched, or an agent workflow's run, closed after its
 * deadline: docs/agent-programs.md says what happens to a workflow agent whose endpoint's worker goes).
 */
export async function startAgentHost(options: AgentHostOptions & AgentEndpointAddress): Promise<AgentHost> {
  const programs = new Map(options.programs.map((program) => [program.name, program]));
  if (programs.size !== options.programs.length) throw new Error('two agent programs have the same name');
  const secret = randomBytes(32);
  const open = new Map<string, OpenAgentTrajectory>();
  const runs = new ProgramRunCalls();
  const calls = temporalAgentCalls(options, open);
  const app = agentEndpoint({ calls, keySecret: secret, runs });
  const server = serve({ fetch: app.fetch, hostname: options.hostname ?? '127.0.0.1', port: options.port ?? 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const { address, port } = server.address() as AddressInfo;
  const url = options.url?.replace(/\/+$/, '') ?? `http://${address.includes(':') ? `[${address}]` : address}:${port}`;
  log.info({ url, programs: [...programs.keys()] }, 'agent program endpoint listening');
  const closeRun = (trajectoryId: string, attempt: number) => {
    if (open.get(trajectoryId)?.attempt !== attempt) return;
    open.delete(trajectoryId);
    runs.forget(trajectoryId);
  };
  return {
    url,
    programs,
    program: (name) => programs.get(name),
    openRun(trajectoryId, run, closeAfterMs) {
      open.set(trajectoryId, run);
      if (closeAfterMs !== undefined) setTimeout(() => closeRun(trajectoryId, run.attempt), Math.min(closeAfterMs, MAX_TIMER_MS)).unref();
      return { baseUrl: `${url}/v1/trajectories/${encodeURIComponent(trajectoryId)}`, apiKey: agentKey(secret, trajectoryId, run.attempt) };
    },
    closeRun,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The calls of the programs this worker runs, answered by their trajectories' workflows. */
function temporalAgentCalls(options: AgentHostOptions, open: ReadonlyMap<string, OpenAgentTrajectory>): AgentCalls {
  const { pool, client, tokenizer } = options;
  const format = toolCallFormatOf(tokenizer);
  return {
    terms: async (trajectoryId) => open.get(trajectoryId),
    async call(trajectoryId: string, call: number, request: ChatCompletionRequest): Promise<{ completion: ChatCompletion }> {
      const attempt = open.get(trajectoryId)?.attempt;
      if (attempt === undefined) throw new UnknownTrajectoryError(trajectoryId);
      const hash = requestHash(request);
      await saveAgentRequest(pool, trajectoryId, hash, request);
      const asked = { attempt, call, requestHash: hash, messageCount: request.messages.length, maxTokens: request.maxTokens };
      let answer: AgentCallAnswer;
      try {
        answer = await client.workflow.getHandle(trajectoryId).executeUpdate(agentCallUpdate, { args: [asked], updateId: `${attempt}/${call}` });
      } catch (error) {
        throw refusalOf(error, trajectoryId);
      }
      const turn = await generatedTurn(pool, trajectoryId, answer.turn);
      const reply = agentReply(tokenizer, format, toolSet(request.tools), turn.outputIds, answer.turn);
      const id = `chatcmpl-${trajectoryId}-${answer.turn}`;
      return {
        completion: chatCompletion(tokenizer, reply, { ...turn, created: answer.created }, { id, model: request.model, logprobs: request.logprobs }),
      };
    },
  };
}

/** The turn's output as generated, from its working row (the trajectory is open while its program runs). */
async function generatedTurn(pool: pg.Pool, trajectoryId: string, turn: number) {
  const { rows } = await pool.query<{ output_ids: Buffer; output_logprobs: Buffer; context_len: number }>(
    'SELECT output_ids, output_logprobs, context_len FROM turn_outputs WHERE trajectory_id = $1 AND turn = $2',
    [trajectoryId, turn],
  );
  if (!rows[0]) throw new Error(`trajectory ${trajectoryId} has no output for turn ${turn} (it was stored, or failed)`);
  return { outputIds: decodeInt32(rows[0].output_ids), logprobs: decodeFloat32(rows[0].output_logprobs), promptTokens: rows[0].context_len };
}

/** A refused update as the endpoint answers it; a closed workflow is an episode that is over. */
function refusalOf(error: unknown, trajectoryId: string): unknown {
  if (error instanceof WorkflowNotFoundError)
    return new CallRefusedError('episode-over', `trajectory ${trajectoryId} is closed: its episode is over`);
  const cause = error instanceof WorkflowUpdateFailedError ? error.cause : undefined;
  if (!(cause instanceof ApplicationFailure)) return error;
  switch (cause.type) {
    case AgentCallRefusal.Diverged:
      return new CallRefusedError('call-diverged', cause.message);
    case AgentCallRefusal.TurnLimit:
      return new CallRefusedError('turn-limit', cause.message);
    case AgentCallRefusal.OutOfOrder:
      return new CallRefusedError('call-out-of-order', cause.message);
    case AgentCallRefusal.EpisodeOver:
      return new CallRefusedError('episode-over', cause.message);
    default:
      return error;
  }
}
