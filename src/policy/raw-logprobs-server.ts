import { redactUrl } from '../secrets/redact-url.js';

/**
 * The inference server would return logprobs of another distribution than the one this request samples its tokens
 * from (raw logprobs at T ≠ 1, say): serving it would store behaviour logprobs a trainer silently computes wrong
 * importance ratios from. Not retryable on this server; the message says how to start the server instead.
 */
export class RawLogprobsServer extends Error {
  override readonly name = 'RawLogprobsServer';
  readonly url: string;
  constructor(
    url: string,
    readonly sampling: string,
    readonly reason: string,
  ) {
    super(`inference server ${redactUrl(url)} refused a request sampled at ${sampling}: ${reason}`);
    this.url = redactUrl(url);
  }
}
