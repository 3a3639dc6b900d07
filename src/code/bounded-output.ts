/**
 * What a test printed, kept up to `limit` bytes and never more: past the limit `push` says so and drops the
 * chunk, so an endless stream costs the worker nothing beyond the limit. Decoded once, at the end.
 */
export class BoundedOutput {
  private readonly chunks: Buffer[] = [];
  private size = 0;
  overflowed = false;

  constructor(private readonly limit: number) {}

  /** Keeps the chunk; false (and nothing kept) once the total passes the limit. */
  push(chunk: Buffer): boolean {
    if (this.overflowed) return false;
    this.size += chunk.length;
    if (this.size > this.limit) {
      this.overflowed = true;
      this.chunks.length = 0;
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  bytes(): Buffer {
    return Buffer.concat(this.chunks);
  }
}

/** The last `size` bytes of a stream (stderr): a long trace is truncated, never counted against the test. */
export class OutputTail {
  private tail = Buffer.alloc(0);

  constructor(private readonly size: number) {}

  push(chunk: Buffer): void {
    const joined = Buffer.concat([this.tail, chunk.length > this.size ? chunk.subarray(-this.size) : chunk]);
    this.tail = joined.length > this.size ? Buffer.from(joined.subarray(-this.size)) : joined;
  }

  text(): string {
    return this.tail.toString('utf8');
  }
}
