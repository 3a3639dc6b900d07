import type { InferenceBackend, StreamEnd, StreamRequest, TokenChunk } from '../../../src/policy/inference-backend.js';
import type { TopLogprob } from '../../../src/policy/logprob-verdict.js';

/** One answer the fake streams: its tokens, sent in chunks of `chunk`, each with logprob `logprob`. */
export interface ScriptedAnswer {
  ids: number[];
  logprob?: number;
  chunk?: number;
  weightVersion?: number;
  /** The prompt tokens the server reports served from its prefix cache (none reported when absent). */
  cachedTokens?: number;
}

/**
 * An inference server for activity tests that need no HTTP: it answers request n with answer n (cycling), and keeps
 * every request it was sent, so a test can count what was generated and check what was asked.
 */
export class ScriptedBackend implements InferenceBackend {
  readonly url = 'http://scripted.invalid';
  readonly requests: StreamRequest[] = [];

  constructor(
    private readonly answers: ScriptedAnswer[],
    readonly kind: 'sglang' | 'vllm' = 'sglang',
    private readonly weightTag?: string,
  ) {}

  async generate(request: StreamRequest, onChunk: (chunk: TokenChunk) => void): Promise<StreamEnd> {
    const answer = this.answers[this.requests.length % this.answers.length]!;
    this.requests.push(request);
    const size = answer.chunk ?? answer.ids.length;
    for (let start = 0; start < answer.ids.length; start += size) {
      const ids = answer.ids.slice(start, start + size);
      onChunk({
        ids,
        logprobs: ids.map(() => answer.logprob ?? -0.5),
        ...(answer.weightVersion === undefined ? {} : { weightVersion: answer.weightVersion }),
      });
    }
    return { finishReason: 'stop', ...(answer.cachedTokens === undefined ? {} : { cachedTokens: answer.cachedTokens }) };
  }

  async topLogprobs(): Promise<TopLogprob[]> {
    return [];
  }
  async abort(): Promise<void> {}
  async health(): Promise<boolean> {
    return true;
  }
  async updateWeights(): Promise<void> {}
  async scorePrompt(inputIds: readonly number[]): Promise<(number | null)[]> {
    return inputIds.map((_, i) => (i === 0 ? null : -1));
  }
  async servesWeights(): Promise<boolean> {
    return false;
  }
  async servedWeightVersion(): Promise<string | undefined> {
    return this.weightTag;
  }
  async contextWindow(): Promise<number> {
    return 8_192;
  }
}
