/** Thrown when a dataset file does not exist or cannot be read. */
export class DatasetNotFound extends Error {
  override readonly name = 'DatasetNotFound';

  constructor(
    readonly path: string,
    /** The system error code (`ENOENT`, `EACCES`, `EISDIR`…), when there is one. */
    readonly code: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`Dataset not found or unreadable: ${path}${code === undefined ? '' : ` (${code})`}`, options);
  }
}
