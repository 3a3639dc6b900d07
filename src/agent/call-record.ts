import type { GeneratedTurn } from './chat-completion-response.js';

/** One model call an agent made, as stored: answered again from here when the program runs again. */
export interface CallRecord {
  /** Its place among the trajectory's calls, counted from 0 in the order the program made them. */
  call: number;
  /** requestHash of the call's request. */
  requestHash: string;
  /** How many messages it sent: only for saying where a diverging call differs. */
  messageCount: number;
  turn: GeneratedTurn;
}

/** What to do with a call: answer it from the store, or generate its turn (no call at its index was made before). */
export type CallAnswer = { kind: 'replay'; record: CallRecord } | { kind: 'generate' };

/**
 * A re-run program made a call that differs from the one recorded at the same index. Its earlier run was answered
 * with a turn generated for the recorded request; answering this one from it would drift silently, and generating
 * anew would leave the trajectory holding two histories. Not retryable: the program is not deterministic in its calls.
 */
export class CallDivergedError extends Error {
  override readonly name = 'CallDivergedError';
  constructor(
    readonly call: number,
    readonly recorded: { requestHash: string; messageCount: number },
    readonly sent: { requestHash: string; messageCount: number },
  ) {
    super(
      `call ${call} differs from the call recorded at that index (${recorded.messageCount} messages, request ${recorded.requestHash.slice(0, 12)}; ` +
        `now ${sent.messageCount} messages, request ${sent.requestHash.slice(0, 12)}): the agent program must make the same calls when it runs again`,
    );
  }
}

/** A call index past the next one: a record is missing, or the calls were counted out of order. */
export class CallOutOfOrderError extends Error {
  override readonly name = 'CallOutOfOrderError';
  constructor(
    readonly call: number,
    readonly recordedCalls: number,
  ) {
    super(`call ${call} arrived, but only ${recordedCalls} calls are recorded: the next call is ${recordedCalls}`);
  }
}

/**
 * Whether the call at `call` is answered from the store (the same request was recorded there: replay, no turn is
 * generated again) or generated (the first call past the recorded ones). Throws CallDivergedError for another request at
 * a recorded index, and CallOutOfOrderError for an index past the next one. Pure: no I/O, no clock.
 */
export function answerFromStore(records: readonly CallRecord[], call: number, sent: { requestHash: string; messageCount: number }): CallAnswer {
  const record = records.find((candidate) => candidate.call === call);
  if (record) {
    if (record.requestHash !== sent.requestHash) throw new CallDivergedError(call, record, sent);
    return { kind: 'replay', record };
  }
  if (call !== records.length) throw new CallOutOfOrderError(call, records.length);
  return { kind: 'generate' };
}
