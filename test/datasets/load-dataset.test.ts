import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DatasetNotFound, loadDataset, parseDatasetText } from '../../src/datasets/index.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ratchet-datasets-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function datasetFile(name: string, text: string): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, text);
  return path;
}

const rows = (count: number): string =>
  Array.from({ length: count }, (_, i) => JSON.stringify({ question: `What is ${i} + 1?`, answer: `#### ${i + 1}` })).join('\n');

describe('loadDataset', () => {
  it('streams a file to the same result as parsing its text', async () => {
    const text = `${rows(3)}\n{bad\n\n${JSON.stringify({ problem: 'p', answer: '1', unique_id: 'u' })}\n`;
    const path = await datasetFile('mixed.jsonl', text);
    const loaded = await loadDataset(path);
    expect(loaded).toEqual(parseDatasetText(text, path));
    expect(loaded.problems.map((problem) => problem.qid)).toEqual(['mixed-1', 'mixed-2', 'mixed-3', 'u']);
    expect(loaded.errors.map((error) => `${error.file}:${error.line}`)).toEqual([`${path}:4`]);
  });

  it('reads CRLF line endings and a byte order mark', async () => {
    const path = await datasetFile('windows.jsonl', `\uFEFF${rows(2).replace('\n', '\r\n')}\r\n`);
    const { problems, errors } = await loadDataset(path);
    expect(errors).toEqual([]);
    expect(problems.map((problem) => problem.gold)).toEqual([['#### 1'], ['#### 2']]);
  });

  it('returns an empty dataset for an empty file', async () => {
    expect(await loadDataset(await datasetFile('empty.jsonl', ''))).toEqual({ problems: [], errors: [] });
  });
});

describe('limit', () => {
  it('stops after N valid problems, not counting malformed rows', async () => {
    const path = await datasetFile('limited.jsonl', `{bad\n${rows(10)}`);
    const { problems, errors } = await loadDataset(path, { limit: 4 });
    expect(problems.map((problem) => problem.qid)).toEqual(['limited-2', 'limited-3', 'limited-4', 'limited-5']);
    expect(errors).toHaveLength(1);
  });

  it('reports no errors from rows after the limit', () => {
    const { problems, errors } = parseDatasetText(`${rows(2)}\n{bad`, 'x.jsonl', { limit: 2 });
    expect(problems).toHaveLength(2);
    expect(errors).toEqual([]);
  });

  it('of zero loads nothing', async () => {
    expect((await loadDataset(await datasetFile('zero.jsonl', rows(3)), { limit: 0 })).problems).toEqual([]);
  });

  it('rejects a negative or fractional limit', () => {
    expect(() => parseDatasetText(rows(1), 'x.jsonl', { limit: -1 })).toThrow(RangeError);
    expect(() => parseDatasetText(rows(1), 'x.jsonl', { limit: 1.5 })).toThrow(RangeError);
  });
});

describe('an unreadable file', () => {
  it('throws DatasetNotFound naming the missing path', async () => {
    const path = join(dir, 'nope.jsonl');
    const error: unknown = await loadDataset(path).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(DatasetNotFound);
    expect(error).toMatchObject({ name: 'DatasetNotFound', path, code: 'ENOENT' });
    expect((error as Error).message).toContain(path);
  });

  it('throws DatasetNotFound for a directory', async () => {
    await expect(loadDataset(dir)).rejects.toMatchObject({ name: 'DatasetNotFound', path: dir, code: 'EISDIR' });
  });
});

describe('a line that is not valid UTF-8', () => {
  const good = (n: number) => JSON.stringify({ question: `What is ${n} + 1?`, answer: `#### ${n + 1}` });

  it('is reported as file:line and skipped, instead of loading with U+FFFD in it', async () => {
    const latin1 = Buffer.from(`${JSON.stringify({ problem: 'Combien coûte le café ?', answer: '2' })}\n`, 'latin1');
    const path = join(dir, 'latin1.jsonl');
    await writeFile(path, Buffer.concat([Buffer.from(`${good(1)}\n`), latin1, Buffer.from(`${good(3)}\n`)]));
    const { problems, errors } = await loadDataset(path);
    expect(problems.map((problem) => problem.qid)).toEqual(['latin1-1', 'latin1-3']);
    expect(errors.map(String)).toEqual([`${path}:2: not valid UTF-8 (byte 0xFB at byte 23 of the line); re-encode the file as UTF-8`]);
  });

  it('keeps line numbers right for a CRLF split across read chunks', async () => {
    // The stream reads 64 KiB at a time: put the CR of line 1 last in the first chunk and its LF first in the next.
    const first = JSON.stringify({ problem: 'p'.repeat(65_535 - 27), answer: '1' });
    expect(Buffer.byteLength(first)).toBe(65_535);
    const text = `${first}\r\n${good(2)}\r\n\r\n${good(4)}`;
    const path = await datasetFile('chunked.jsonl', text);
    const loaded = await loadDataset(path);
    expect(loaded.errors).toEqual([]);
    expect(loaded.problems.map((problem) => problem.qid)).toEqual(['chunked-1', 'chunked-2', 'chunked-4']);
    expect(loaded).toEqual(parseDatasetText(text, path));
  });
});
