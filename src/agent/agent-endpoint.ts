import { Hono, type Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { log as projectLog } from '../logging.js';
import { agentErrorAnswer, EndedRunError, RequestTooLargeError, UnknownTrajectoryError } from './agent-error-response.js';
import { verifyAgentKey } from './agent-key.js';
import { AgentRequestError } from './agent-request-error.js';
import { parseChatCompletionRequest, type CallTerms, type ChatCompletionRequest } from './chat-completion-request.js';
import type { ChatCompletion } from './chat-completion-response.js';
import { chatCompletionChunks, serverSentEvents } from './chat-completion-stream.js';
import { ProgramRunCalls } from './program-run-calls.js';
import { requestHash } from './request-hash.js';

/**
 * The most a call's body may hold: 8 MiB. A long agent conversation is a few hundred KiB of JSON; a body past this is a
 * runaway program (a loop appending its own history), refused before it is read into memory.
 */
export const AGENT_BODY_LIMIT_BYTES = 8 * 1024 * 1024;

/** What the endpoint knows of a trajectory whose agent program is running. */
export interface OpenAgentTrajectory extends CallTerms {
  /** The policy's name, listed by `GET …/models` (a call's `model` is echoed whatever it is). */
  policy: string;
  /** The program run now open (its attempt): keys of other runs are refused. */
  attempt: number;
}

/** What answers an agent program's calls: the trajectory's workflow, or an in-memory ledger in tests. */
export interface AgentCalls {
  /** The trajectory's terms and open run, or undefined when no agent program of that trajectory is running. */
  terms(trajectoryId: string): Promise<OpenAgentTrajectory | undefined>;
  /**
   * Answers call `call` (counted from 0 in the program's current run): replayed from the store when a re-run program
   * makes a recorded call again, else generated. Throws CallDivergedError for another call at a recorded index,
   * AgentRequestError for a request the trajectory cannot serve; anything else is answered as a 500.
   */
  call(trajectoryId: string, call: number, request: ChatCompletionRequest): Promise<{ completion: ChatCompletion }>;
}

export interface AgentEndpointOptions {
  calls: AgentCalls;
  /** The worker's secret the program's keys were made under (agentKey). */
  keySecret: string | Uint8Array;
  /** The per-run call counts: given, so the wiring can forget a trajectory when it closes. */
  runs?: ProgramRunCalls;
  /** Where refusals (warn) and failures (error) are logged: the project's log unless given. */
  log?: AgentEndpointLog;
}

/** The two pino methods the endpoint logs with. */
export interface AgentEndpointLog {
  warn(fields: object, message: string): void;
  error(fields: object, message: string): void;
}

interface OpenRun {
  trajectoryId: string;
  attempt: number;
  trajectory: OpenAgentTrajectory;
}

type AgentEnv = { Variables: { run: OpenRun; call: number } };

/**
 * The OpenAI-compatible endpoint an agent program is pointed at: base URL `<host>/v1/trajectories/<trajectory id,
 * URL-encoded>`, API key agentKey(secret, trajectoryId, attempt). Serves `POST /chat/completions` (streamed or not)
 * and `GET /models`; every error in OpenAI's shape (agent-error-response.ts), logged with the trajectory id.
 *
 * Calls are numbered per program run, which the key names (its attempt): a re-run program counts from 0 again, and its
 * calls are answered from the store by index. So a program makes one call at a time: a call while another of its
 * run's is answered is refused (409), never numbered in arrival order.
 */
export function agentEndpoint({ calls, keySecret, runs = new ProgramRunCalls(), log = projectLog }: AgentEndpointOptions): Hono<AgentEnv> {
  const app = new Hono<AgentEnv>();
  const answerError = (c: Context<AgentEnv>, error: unknown): Response => {
    const trajectoryId = c.req.param('trajectoryId') ?? '(none)';
    const call = c.get('call');
    const { status, body } = agentErrorAnswer(error, trajectoryId);
    if (status === 500) log.error({ err: error, trajectoryId, call }, 'agent call failed');
    else log.warn({ trajectoryId, call, status, code: body.error.code }, `agent call refused: ${body.error.message}`);
    // OpenAI's clients retry a 409 unless told not to; a refused call is refused again. A 500 is retried: the call keeps
    // its index (ProgramRunCalls.end), so the retry is the same call.
    return c.json(body, status, status === 500 ? {} : { 'x-should-retry': 'false' });
  };
  app.onError((error, c) => answerError(c, error));
  app.notFound((c) =>
    c.json({ error: { message: `no route ${c.req.method} ${c.req.path}`, type: 'invalid_request_error', param: null, code: 'unknown-route' } }, 404),
  );

  const trajectory = '/v1/trajectories/:trajectoryId';
  // The key first, then the trajectory: a caller without a key learns nothing of which trajectories exist.
  app.use(`${trajectory}/*`, async (c, next) => {
    const trajectoryId = c.req.param('trajectoryId');
    const { attempt } = verifyAgentKey(keySecret, bearerToken(c.req.header('authorization')), trajectoryId);
    const open = await calls.terms(trajectoryId);
    if (!open) {
      runs.forget(trajectoryId);
      throw new UnknownTrajectoryError(trajectoryId);
    }
    if (attempt !== open.attempt) throw new EndedRunError(trajectoryId, attempt, open.attempt);
    c.set('run', { trajectoryId, attempt, trajectory: open });
    await next();
  });

  app.get(`${trajectory}/models`, (c) =>
    c.json({ object: 'list', data: [{ id: c.get('run').trajectory.policy, object: 'model', created: 0, owned_by: 'ratchet' }] }),
  );

  app.post(
    `${trajectory}/chat/completions`,
    bodyLimit({ maxSize: AGENT_BODY_LIMIT_BYTES, onError: (c) => answerError(c, new RequestTooLargeError(AGENT_BODY_LIMIT_BYTES)) }),
    async (c) => {
      const { trajectoryId, attempt, trajectory: open } = c.get('run');
      const request = parseChatCompletionRequest(await jsonBody(c), open);
      const begun = runs.begin(trajectoryId, attempt, requestHash(request));
      c.set('call', begun.call);
      let answered = false;
      try {
        const { completion } = await calls.call(trajectoryId, begun.call, request);
        answered = true;
        if (!request.stream) return c.json(completion);
        // The turn is generated whole before the call is answered (durably), so the stream is sent in one piece.
        const events = serverSentEvents(chatCompletionChunks(completion, { includeUsage: request.streamUsage }));
        return c.body(events, 200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
      } finally {
        runs.end(trajectoryId, attempt, begun, answered);
      }
    },
  );
  return app;
}

/** The key from `Authorization: Bearer <key>`, as OpenAI's clients send it. */
function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}

async function jsonBody(c: Context<AgentEnv>): Promise<unknown> {
  const text = await c.req.text();
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new AgentRequestError('invalid-request', '(body)', `is not JSON (${(error as Error).message})`);
  }
}
