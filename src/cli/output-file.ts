import { open, rm } from 'node:fs/promises';
import type { Writable } from 'node:stream';

/** A command's output file could not be opened or written; `cause` holds the system error. */
export class OutputUnwritable extends Error {
  override readonly name = 'OutputUnwritable';
  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    super(
      `cannot write ${path}: ${(cause as NodeJS.ErrnoException)?.code ?? ''} ${(cause as Error)?.message ?? String(cause)}`.replace(
        /: (\w+) \1:/,
        ': $1:',
      ),
      { cause },
    );
  }
}

/**
 * The file a command writes its result to. Opened before the command does any work (starting Postgres,
 * claiming a batch), so a path that cannot be written fails first and costs nothing; a write that fails later
 * is reported by `finish()` rather than as an unhandled stream error that would skip the command's clean-up.
 */
export class OutputFile {
  private failure: unknown;

  private constructor(
    readonly path: string,
    readonly stream: Writable,
    private readonly regular: boolean,
  ) {
    stream.on('error', (error) => {
      this.failure ??= error;
    });
  }

  static async open(path: string): Promise<OutputFile> {
    try {
      const handle = await open(path, 'w');
      // Only a regular file is removed when abandoned: never /dev/stdout, a FIFO or a device.
      const regular = (await handle.stat()).isFile();
      return new OutputFile(path, handle.createWriteStream(), regular);
    } catch (error) {
      throw new OutputUnwritable(path, error);
    }
  }

  /** Throws the first write error so far, if any: a long writer checks between rows. */
  check(): void {
    if (this.failure !== undefined) throw new OutputUnwritable(this.path, this.failure);
  }

  /** Flushes and closes the file; throws if any write failed. */
  async finish(): Promise<void> {
    this.check();
    await new Promise<void>((resolve) =>
      this.stream.end((error?: Error | null) => {
        if (error) this.failure ??= error;
        resolve();
      }),
    );
    this.check();
  }

  /** Closes and removes a partly written file, so no reader mistakes it for a whole one. */
  async abandon(): Promise<void> {
    this.stream.destroy();
    if (this.regular) await rm(this.path, { force: true }).catch(() => undefined);
  }
}
