import { open, type FileHandle } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { RowCollector } from './collector.js';
import { DatasetNotFound } from './dataset-not-found.js';
import type { DatasetOptions, LoadedDataset } from './problem.js';

/**
 * Loads a JSONL dataset file line by line, so a large file is never held in memory whole. Malformed rows
 * come back as `errors`; only a missing or unreadable file throws (`DatasetNotFound`).
 */
export async function loadDataset(path: string, options: DatasetOptions = {}): Promise<LoadedDataset> {
  const collector = new RowCollector(path, options.limit);
  const handle = await openDataset(path);
  const input = handle.createReadStream({ encoding: 'utf8', autoClose: false });
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let line = 0;
  try {
    for await (const text of lines) {
      if (collector.full) break;
      collector.add(text, ++line);
    }
  } catch (error) {
    throw new DatasetNotFound(path, errorCode(error), { cause: error });
  } finally {
    lines.close();
    input.destroy();
    await handle.close();
  }
  return collector.result();
}

async function openDataset(path: string): Promise<FileHandle> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new DatasetNotFound(path, errorCode(error), { cause: error });
  }
  // Opening a directory succeeds on Linux; fail here with a clear code rather than mid-read.
  if ((await handle.stat()).isDirectory()) {
    await handle.close();
    throw new DatasetNotFound(path, 'EISDIR');
  }
  return handle;
}

function errorCode(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}
