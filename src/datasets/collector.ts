import type { LoadedDataset, Problem } from './problem.js';
import { RowError } from './row-error.js';
import { rowRequestProblem } from './row-request.js';
import { parseRow } from './row.js';

/**
 * Accumulates the rows of one file, in order: assigns qids, rejects duplicates, and says when `limit`
 * valid problems have been collected. Shared by the in-memory and the streaming loader.
 */
export class RowCollector {
  private readonly problems: Problem[] = [];
  private readonly errors: RowError[] = [];
  private readonly qidLines = new Map<string, number>();
  private readonly stem: string;
  private readonly limit: number;

  constructor(
    private readonly file: string,
    limit = Number.POSITIVE_INFINITY,
  ) {
    if (limit !== Number.POSITIVE_INFINITY && !(Number.isInteger(limit) && limit >= 0)) {
      throw new RangeError(`limit must be a non-negative integer, got ${String(limit)}`);
    }
    this.limit = limit;
    this.stem = fileStem(file);
  }

  get full(): boolean {
    return this.problems.length >= this.limit;
  }

  /** Adds the text of 1-based line `line`; blank lines are ignored. */
  add(text: string, line: number): void {
    // A UTF-8 byte order mark would otherwise make the first row invalid JSON.
    const row = line === 1 ? text.replace(/^\uFEFF/, '') : text;
    if (row.trim() === '') return;

    const result = parseRow(row);
    if (!result.ok) {
      this.reject(line, result.message);
      return;
    }
    const { id, ...fields } = result.row;
    const qid = id ?? `${this.stem}-${line}`;
    const firstLine = this.qidLines.get(qid);
    if (firstLine !== undefined) {
      this.reject(line, `duplicate qid "${qid}" (first on line ${firstLine})`);
      return;
    }
    const problem: Problem = { qid, problem: fields.problem, gold: fields.gold, source: fields.source };
    if (fields.taskId !== undefined) problem.taskId = fields.taskId;
    if (fields.code !== undefined) problem.code = fields.code;
    if (fields.environment !== undefined) problem.environment = fields.environment;
    if (fields.environmentArgs !== undefined) problem.environmentArgs = fields.environmentArgs;
    // A row that would fail at submission (or, worse, in the workflow) is a malformed row: skip it here.
    const unusable = rowRequestProblem(problem);
    if (unusable !== undefined) {
      this.reject(line, unusable);
      return;
    }
    this.qidLines.set(qid, line);
    this.problems.push(problem);
  }

  /** Records 1-based line `line` as skipped, and why; the file loader calls it for a line that is not UTF-8. */
  reject(line: number, message: string): void {
    this.errors.push(new RowError(this.file, line, message));
  }

  result(): LoadedDataset {
    return { problems: this.problems, errors: this.errors };
  }
}

// Kept free of node:path so the parsing modules stay importable anywhere, workflow bundle included.
function fileStem(file: string): string {
  const base = file.split(/[\\/]/).pop() ?? file;
  const dot = base.lastIndexOf('.');
  return dot > 0 ? base.slice(0, dot) : base;
}
