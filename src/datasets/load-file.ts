import { open, type FileHandle } from 'node:fs/promises';
import { byteLines } from './byte-lines.js';
import { RowCollector } from './collector.js';
import { DatasetNotFound } from './dataset-not-found.js';
import type { DatasetOptions, LoadedDataset } from './problem.js';
import { decodeLine } from './utf8-line.js';

/**
 * Loads a JSONL dataset file line by line, so a large file is never held in memory whole. Malformed rows
 * (a line that is not UTF-8 included) come back as `errors`; only a missing or unreadable file throws
 * (`DatasetNotFound`).
 */
export async function loadDataset(path: string, options: DatasetOptions = {}): Promise<LoadedDataset> {
  const collector = new RowCollector(path, options.limit);
  const handle = await openDataset(path);
  // Bytes, not a utf8 stream: decoding a whole stream would turn invalid bytes into U+FFFD without a word.
  const input = handle.createReadStream({ autoClose: false });
  let line = 0;
  try {
    for await (const bytes of byteLines(input)) {
      if (collector.full) break;
      const decoded = decodeLine(bytes);
      if (decoded.ok) collector.add(decoded.text, ++line);
      else collector.reject(++line, decoded.message);
    }
  } catch (error) {
    throw new DatasetNotFound(path, errorCode(error), { cause: error });
  } finally {
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
