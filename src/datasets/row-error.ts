/**
 * A skipped dataset row. It is a record rather than a thrown error: a file keeps loading past a bad row,
 * and the caller decides whether any errors are fatal.
 */
export class RowError {
  constructor(
    readonly file: string,
    /** 1-based line number in the file. */
    readonly line: number,
    readonly message: string,
  ) {}

  toString(): string {
    return `${this.file}:${this.line}: ${this.message}`;
  }
}
