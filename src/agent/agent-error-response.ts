import { AgentKeyError } from './agent-key.js';
import { AgentRequestError } from './agent-request-error.js';
import { CallDivergedError } from './call-record.js';
import { ConcurrentCallError } from './program-run-calls.js';

/** A trajectory the endpoint has no open agent program for: never started, or closed. */
export class UnknownTrajectoryError extends Error {
  override readonly name = 'UnknownTrajectoryError';
  constructor(readonly trajectoryId: string) {
    super(`trajectory ${trajectoryId} has no agent program running: it is closed, or was never started`);
  }
}

/** A key of an earlier (or other) run of the trajectory's program: that run was replaced and makes no more calls. */
export class EndedRunError extends Error {
  override readonly name = 'EndedRunError';
  constructor(
    readonly trajectoryId: string,
    readonly attempt: number,
    readonly openAttempt: number,
  ) {
    super(`this key is for run ${attempt} of trajectory ${trajectoryId}'s agent program, but the trajectory runs run ${openAttempt} now`);
  }
}

/**
 * A call the trajectory refuses as its episode stands: past its turns (`turn-limit`, 400: the episode ends there),
 * after its end (`episode-over`, 409), past the next index (`call-out-of-order`, 409), or, from a program run again,
 * another request at an index already answered (`call-diverged`, 409: the trajectory fails `CallDiverged`).
 */
export class CallRefusedError extends Error {
  override readonly name = 'CallRefusedError';
  constructor(
    readonly code: 'turn-limit' | 'episode-over' | 'call-out-of-order' | 'call-diverged',
    message: string,
  ) {
    super(message);
  }
}

/** A request body past the endpoint's limit. */
export class RequestTooLargeError extends Error {
  override readonly name = 'RequestTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`the request body is over ${limitBytes} bytes, the most an agent's call may send`);
  }
}

/** OpenAI's error body: what its clients read into `APIError.message`, `.type`, `.param` and `.code`. */
export interface OpenAIErrorBody {
  error: { message: string; type: 'invalid_request_error' | 'server_error'; param: string | null; code: string | null };
}

export interface AgentErrorAnswer {
  status: 400 | 401 | 403 | 404 | 409 | 413 | 500;
  body: OpenAIErrorBody;
}

/**
 * How an endpoint answers a failed call, in OpenAI's shape. Codes are Ratchet's kinds (`sampling-mismatch`,
 * `call-diverged`), except `invalid_api_key`, OpenAI's own code for the same refusal. Anything untyped is a 500 whose
 * message names no internals (the error itself is logged).
 */
export function agentErrorAnswer(error: unknown, trajectoryId: string): AgentErrorAnswer {
  const refused = (status: AgentErrorAnswer['status'], message: string, code: string, param: string | null = null): AgentErrorAnswer => ({
    status,
    body: { error: { message, type: 'invalid_request_error', param, code } },
  });
  if (error instanceof AgentKeyError) return refused(401, error.message, 'invalid_api_key');
  if (error instanceof EndedRunError) return refused(403, error.message, 'ended-run');
  if (error instanceof UnknownTrajectoryError) return refused(404, error.message, 'trajectory-not-found');
  if (error instanceof AgentRequestError) return refused(400, error.message, error.kind, error.field);
  if (error instanceof RequestTooLargeError) return refused(413, error.message, 'request-too-large');
  if (error instanceof ConcurrentCallError) return refused(409, error.message, 'concurrent-call');
  if (error instanceof CallRefusedError) return refused(error.code === 'turn-limit' ? 400 : 409, error.message, error.code);
  if (error instanceof CallDivergedError) {
    const { call, recorded, sent } = error;
    return refused(
      409,
      `call ${call}: the agent program made a different call at this index than in its earlier run ` +
        `(${recorded.messageCount} messages then, ${sent.messageCount} now); a program must make the same calls, in the same order, when it runs again`,
      'call-diverged',
    );
  }
  return {
    status: 500,
    body: {
      error: {
        message: `the call could not be answered: the server failed (logged under trajectory ${trajectoryId})`,
        type: 'server_error',
        param: null,
        code: null,
      },
    },
  };
}
