import type { LoadedDataset, Problem } from './problem.js';
import { RowError } from './row-error.js';
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

  constructor(private readonly file: string, limit = Number.POSITIVE_INFINITY) {
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
      this.errors.push(new RowError(this.file, line, result.message));
      return;
    }
    const { id, ...fields } = result.row;
    const qid = id ?? `${this.stem}-${line}`;
    const firstLine = this.qidLines.get(qid);
    if (firstLine !== undefined) {
      this.errors.push(new RowError(this.file, line, `duplicate qid "${qid}" (first on line ${firstLine})`));
      return;
    }
    this.qidLines.set(qid, line);
    const problem: Problem = { qid, problem: fields.problem, gold: fields.gold, source: fields.source };
    if (fields.taskId !== undefined) problem.taskId = fields.taskId;
    this.problems.push(problem);
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
