import type { FinishReason } from '../trajectory/turn.js';
import { PolicyProtocolError, PolicyRejectedRequest, PolicyUnavailable } from './policy-errors.js';
import { describeNetworkError, failureFor, postForStream, type StreamedResponse } from './policy-http.js';
import { serverSentData } from './server-sent-events.js';

export interface TokenStreamCall {
  url: string;
  body: unknown;
  headers?: Record<string, string>;
  /** The caller's cancellation: the stream stops and the signal's reason is thrown. */
  signal?: AbortSignal;
  /** Our own interruption (vLLM has no server-side abort by id): the stream stops and ends with `abort`. */
  interrupt?: AbortSignal;
  /** Handles one `data:` payload; returns the finish reason once the server reports one. */
  onData(data: string): FinishReason | undefined;
  /**
   * Keep reading after the finish reason, up to `[DONE]` or the end of the stream: vLLM sends its usage (the prompt
   * tokens it had cached) in a chunk of its own after the last choice. The turn is finished by then: a stream that
   * breaks or a payload that fails to decode after the finish reason ends it with that finish reason.
   */
  readPastFinish?: boolean;
}

/** An error thrown by onData's consumer, carried out of the classification below untouched. */
class ConsumerError {
  constructor(readonly error: unknown) {}
}

/**
 * POSTs a streaming request and feeds every SSE payload to `onData` until a finish reason arrives.
 * A stream that stops without one (a dropped connection, `[DONE]` too early) is PolicyUnavailable: the
 * tokens delivered so far stay delivered, and the caller decides whether to resume.
 */
export async function runTokenStream(call: TokenStreamCall): Promise<FinishReason> {
  // One signal stops the request: the caller's own where there is no interruption to join it with (SGLang's case,
  // every turn), so no controller and listeners are made per request for nothing.
  const controller = call.interrupt ? new AbortController() : undefined;
  const stop = () => controller?.abort();
  if (controller) {
    call.signal?.addEventListener('abort', stop, { once: true });
    call.interrupt?.addEventListener('abort', stop, { once: true });
  }
  let finished: FinishReason | undefined;
  let response: StreamedResponse | undefined;
  // Whether the server has said all the caller needs: then its connection is kept for the next request, else closed.
  let done = false;
  try {
    call.signal?.throwIfAborted();
    if (call.interrupt?.aborted) return 'abort';
    response = await postForStream(call.url, call.body, call.headers, controller?.signal ?? call.signal);
    if (!response.ok) throw await failureFor(call.url, response);
    for await (const data of serverSentData(response.body)) {
      if (data === '[DONE]') {
        done = true;
        break;
      }
      let finish: FinishReason | undefined;
      try {
        finish = call.onData(data);
      } catch (error) {
        throw error instanceof PolicyProtocolError || error instanceof PolicyRejectedRequest || error instanceof PolicyUnavailable
          ? error
          : new ConsumerError(error);
      }
      if (finish && !call.readPastFinish) {
        done = true;
        return finish;
      }
      finished ??= finish;
    }
    if (finished) return finished;
    throw new PolicyUnavailable(call.url, 'the stream ended before the server reported a finish reason');
  } catch (error) {
    if (error instanceof ConsumerError) throw error.error;
    if (call.signal?.aborted) throw call.signal.reason;
    if (finished) return finished;
    if (call.interrupt?.aborted) return 'abort';
    if (error instanceof PolicyProtocolError || error instanceof PolicyRejectedRequest || error instanceof PolicyUnavailable) throw error;
    throw new PolicyUnavailable(call.url, `connection dropped mid-stream (${describeNetworkError(error)})`, { cause: error });
  } finally {
    if (done) response?.release();
    else response?.close();
    if (controller) {
      call.signal?.removeEventListener('abort', stop);
      call.interrupt?.removeEventListener('abort', stop);
    }
  }
}
