/** The inference server could not be reached or failed on its side (5xx, dropped connection): retry. */
export class PolicyUnavailable extends Error {
  override readonly name = 'PolicyUnavailable';
  constructor(readonly url: string, reason: string, options?: ErrorOptions) {
    super(`inference server ${url} unavailable: ${reason}`, options);
  }
}

/** The server refused the request itself (4xx: context too long, bad parameters): retrying cannot help. */
export class PolicyRejectedRequest extends Error {
  override readonly name = 'PolicyRejectedRequest';
  constructor(readonly url: string, readonly status: number, body: string) {
    super(`inference server ${url} rejected the request (HTTP ${status}): ${body.slice(0, 500)}`);
  }
}

/** The server answered with something that is not the protocol's response shape. */
export class PolicyProtocolError extends Error {
  override readonly name = 'PolicyProtocolError';
  constructor(readonly url: string, reason: string) {
    super(`inference server ${url} broke the protocol: ${reason}`);
  }
}
