import type { SamplingParameters } from '../trajectory/sampling.js';
import type { InferenceBackend } from './inference-backend.js';
import { PolicyUnavailable } from './policy-errors.js';

/** Tokens generated so far in one turn, each with its logprob and the policy version it came from. */
export interface PartialOutput {
  ids: number[];
  logprobs: number[];
  versions: number[];
}

export interface ResumableRequest {
  context: readonly number[];
  maxNewTokens: number;
  sampling: SamplingParameters;
  requestId: string;
  signal?: AbortSignal;
}

export interface ResumableResult {
  output: PartialOutput;
  finishReason: 'stop' | 'length';
  /**
   * Prompt tokens the server reported served from its prefix cache for the request that finished the turn (a turn
   * resumed after an abort reports its last request's, whose prompt holds the tokens generated before it);
   * undefined where the server reports none, or no request was needed.
   */
  cachedTokens?: number;
}

/**
 * The version the server serves now: a number when settled, a promise while a newly loaded version is being proven
 * (src/processes/policy-version-watcher.ts), a rejection when the server serves no version Ratchet can vouch for.
 */
export type ServedVersion = () => number | Promise<number>;

/** Weight updates interrupting one turn this many times in a row without a token in between means a broken server. */
const MAX_FRUITLESS_ABORTS = 20;

/**
 * Generates one turn, continuing from `start` (tokens recovered from an earlier attempt). When the server
 * aborts the request for a weight update, the tokens so far are kept and generation continues under the new
 * weights from context + those tokens, as AReaL's interruptible generation does.
 */
export async function generateResumable(
  backend: InferenceBackend,
  request: ResumableRequest,
  start: PartialOutput,
  currentVersion: ServedVersion,
  onProgress: (output: PartialOutput) => void,
): Promise<ResumableResult> {
  const output: PartialOutput = { ids: [...start.ids], logprobs: [...start.logprobs], versions: [...start.versions] };
  let fruitlessAborts = 0;
  for (let segment = 0; ; segment++) {
    const remaining = request.maxNewTokens - output.ids.length;
    if (remaining <= 0) return { output, finishReason: 'length' };
    // Each segment starts under a settled version and its tokens carry it: a reload aborts the segment before the
    // server changes weights, and the next segment waits here until the new version is proven.
    const segmentVersion = await currentVersion();
    const before = output.ids.length;
    const end = await backend.generate(
      {
        inputIds: output.ids.length === 0 ? request.context : [...request.context, ...output.ids],
        maxNewTokens: remaining,
        sampling: request.sampling,
        requestId: `${request.requestId}/${segment}`,
        signal: request.signal,
      },
      (chunk) => {
        const version = chunk.weightVersion ?? segmentVersion;
        for (let i = 0; i < chunk.ids.length; i++) {
          output.ids.push(chunk.ids[i]!);
          output.logprobs.push(chunk.logprobs[i] ?? 0);
          output.versions.push(version);
        }
        onProgress(output);
      },
    );
    if (end.finishReason !== 'abort') {
      return { output, finishReason: end.finishReason, ...(end.cachedTokens === undefined ? {} : { cachedTokens: end.cachedTokens }) };
    }
    request.signal?.throwIfAborted();
    fruitlessAborts = output.ids.length > before ? 0 : fruitlessAborts + 1;
    if (fruitlessAborts >= MAX_FRUITLESS_ABORTS) {
      throw new PolicyUnavailable(backend.url, `request ${request.requestId} aborted ${fruitlessAborts} times in a row without progress`);
    }
  }
}
