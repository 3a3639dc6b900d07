/** One streaming request in flight, which `/abort_request` or a weight update can end. */
export interface LiveStream {
  readonly rid: string;
  /** Aborted with the reason the stream reports in its abort finish reason. */
  readonly abort: AbortController;
  readonly done: Promise<void>;
}

/** The streaming requests in flight, so aborts can find them and a weight update can wait for them to end. */
export class LiveStreams {
  private readonly streams = new Map<LiveStream, () => void>();

  open(rid: string): LiveStream {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const stream: LiveStream = { rid, abort: new AbortController(), done };
    this.streams.set(stream, finish);
    return stream;
  }

  close(stream: LiveStream): void {
    this.streams.get(stream)?.();
    this.streams.delete(stream);
  }

  /** Aborts the requests with this rid; SGLang ignores an rid it does not know. */
  abort(rid: string, reason: string): void {
    for (const stream of this.streams.keys()) if (stream.rid === rid) stream.abort.abort(reason);
  }

  /** Aborts every request and waits until each has sent its last chunk. */
  async abortAll(reason: string): Promise<void> {
    const streams = [...this.streams.keys()];
    for (const stream of streams) stream.abort.abort(reason);
    await Promise.all(streams.map((stream) => stream.done));
  }
}
