import { redactUrl } from '../secrets/redact-url.js';

/** The inference server could not be reached or failed on its side (5xx, dropped connection): retry. */
export class PolicyUnavailable extends Error {
  override readonly name = 'PolicyUnavailable';
  readonly url: string;
  constructor(url: string, reason: string, options?: ErrorOptions) {
    super(`inference server ${redactUrl(url)} unavailable: ${reason}`, options);
    this.url = redactUrl(url);
  }
}

/** The server refused the request itself (4xx: context too long, bad parameters): retrying cannot help. */
export class PolicyRejectedRequest extends Error {
  override readonly name = 'PolicyRejectedRequest';
  readonly url: string;
  constructor(
    url: string,
    readonly status: number,
    body: string,
  ) {
    super(`inference server ${redactUrl(url)} rejected the request (HTTP ${status}): ${body.slice(0, 500)}`);
    this.url = redactUrl(url);
  }
}

/** The server answered with something that is not the protocol's response shape. */
export class PolicyProtocolError extends Error {
  override readonly name = 'PolicyProtocolError';
  readonly url: string;
  constructor(url: string, reason: string) {
    super(`inference server ${redactUrl(url)} broke the protocol: ${reason}`);
    this.url = redactUrl(url);
  }
}
