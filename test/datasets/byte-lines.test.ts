import { describe, expect, it } from 'vitest';
import { byteLines } from '../../src/datasets/byte-lines.js';
import { decodeLine, firstInvalidByte } from '../../src/datasets/utf8-line.js';

async function linesOf(...chunks: string[]): Promise<string[]> {
  async function* source() {
    for (const chunk of chunks) yield Buffer.from(chunk, 'latin1');
  }
  const lines: string[] = [];
  for await (const line of byteLines(source())) lines.push(Buffer.from(line).toString('latin1'));
  return lines;
}

describe('byteLines ends lines where readline does', () => {
  it('at LF, CRLF and a lone CR, with no line after a final newline', async () => {
    expect(await linesOf('a\nb\r\nc\rd\n')).toEqual(['a', 'b', 'c', 'd']);
  });

  it('keeps empty lines between line ends', async () => {
    expect(await linesOf('a\n\n\r\n\rb')).toEqual(['a', '', '', '', 'b']);
  });

  it('treats a CRLF split across two chunks as one line end', async () => {
    expect(await linesOf('a\r', '\nb')).toEqual(['a', 'b']);
    expect(await linesOf('a\r', 'b')).toEqual(['a', 'b']);
  });

  it('joins a line that spans several chunks', async () => {
    expect(await linesOf('ab', 'cd', 'e\nf', 'g')).toEqual(['abcde', 'fg']);
  });

  it('yields nothing for no bytes', async () => {
    expect(await linesOf()).toEqual([]);
    expect(await linesOf('')).toEqual([]);
  });
});

describe('decodeLine', () => {
  const bytes = (...values: number[]) => new Uint8Array(values);

  it('decodes UTF-8, keeping a byte order mark for the collector to strip', () => {
    expect(decodeLine(Buffer.from('\uFEFF{"é": "€😀"}'))).toEqual({ ok: true, text: '\uFEFF{"é": "€😀"}' });
  });

  it('names the first byte that is not UTF-8, and where it is', () => {
    // "café" in Latin-1: é is the lone byte 0xE9.
    expect(decodeLine(Buffer.from('{"x": "café"}', 'latin1'))).toEqual({
      ok: false,
      message: 'not valid UTF-8 (byte 0xE9 at byte 11 of the line); re-encode the file as UTF-8',
    });
  });

  it('finds overlong forms, encoded surrogates, code points above U+10FFFF and cut-off sequences', () => {
    expect(firstInvalidByte(bytes(0x61, 0xc0, 0xaf))).toBe(1); // overlong "/"
    expect(firstInvalidByte(bytes(0xe0, 0x80, 0xaf))).toBe(0); // overlong, three bytes
    expect(firstInvalidByte(bytes(0x61, 0x62, 0xed, 0xa0, 0x80))).toBe(2); // U+D800
    expect(firstInvalidByte(bytes(0xf4, 0x90, 0x80, 0x80))).toBe(0); // U+110000
    expect(firstInvalidByte(bytes(0x61, 0xe2, 0x82))).toBe(1); // € cut short
    expect(firstInvalidByte(bytes(0x80))).toBe(0); // a continuation byte alone
    expect(firstInvalidByte(Buffer.from('a€😀\u07ff'))).toBe(-1);
  });

  it('agrees with the fatal decoder on every two-byte sequence', () => {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    for (let a = 0; a < 256; a++) {
      for (let b = 0; b < 256; b++) {
        const pair = bytes(a, b);
        let valid = true;
        try {
          decoder.decode(pair);
        } catch {
          valid = false;
        }
        expect(firstInvalidByte(pair) === -1).toBe(valid);
      }
    }
  });
});
