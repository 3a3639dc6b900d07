import { describe, expect, it } from 'vitest';
import { serverSentData } from '../../src/policy/server-sent-events.js';

async function* pieces(bytes: Uint8Array, cuts: number[]): AsyncGenerator<Uint8Array> {
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
}

async function read(text: string, cuts: number[] = []): Promise<string[]> {
  const out: string[] = [];
  for await (const data of serverSentData(pieces(new TextEncoder().encode(text), cuts))) out.push(data);
  return out;
}

/** The parser as it read lines before it read them in place (one regex and two slices a line): what it must still return. */
function byLines(text: string): string[] {
  const out: string[] = [];
  let data: string[] = [];
  const lines = text.split('\n');
  const complete = lines.slice(0, -1); // the text after the last newline is a half-written line
  for (const raw of complete) {
    const line = raw.replace(/\r$/, '');
    if (line === '') {
      if (data.length > 0) out.push(data.join('\n'));
      data = [];
    } else if (line.startsWith('data:')) {
      data.push(line.slice(5).replace(/^ /, ''));
    }
  }
  if (data.length > 0) out.push(data.join('\n'));
  return out;
}

function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('server-sent data', () => {
  it('yields each event’s data lines joined, drops one space after data: and a \\r before the newline, ignores other fields', async () => {
    expect(await read('data: {"a":1}\n\ndata:{"b":2}\r\n\r\n: comment\nevent: x\nid: 3\ndata: one\ndata:  two\n\ndata: [DONE]\n\n')).toEqual([
      '{"a":1}',
      '{"b":2}',
      'one\n two',
      '[DONE]',
    ]);
    expect(await read('data:\n\ndata\n\ndata: last')).toEqual(['']);
    expect(await read('data: last\n')).toEqual(['last']);
    expect(await read('data: é ü\n\n', [7, 9])).toEqual(['é ü']);
  });

  it('reads random streams cut at random bytes as line-by-line reading does', async () => {
    const next = random(38);
    const parts = ['data:', 'data: ', 'data', 'event: e', ': c', 'x', ' ', '{"ids":[1,2]}', 'é', '\r', '\n', '\n', '\r\n', '\n\n'];
    for (let i = 0; i < 1_000; i++) {
      const text = Array.from({ length: Math.floor(next() * 30) }, () => parts[Math.floor(next() * parts.length)]).join('');
      const length = new TextEncoder().encode(text).length;
      const cuts = Array.from({ length: Math.floor(next() * 4) }, () => Math.floor(next() * (length + 1))).sort((a, b) => a - b);
      expect(await read(text, cuts), JSON.stringify({ text, cuts })).toEqual(byLines(text));
    }
  });
});
