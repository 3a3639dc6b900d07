const LF = 0x0a;
const CR = 0x0d;

/**
 * Splits a byte stream into lines without decoding it, so each line can be checked for valid UTF-8 on its
 * own, and only one line is held at a time. A line ends where readline ends it: at LF, CRLF or a lone CR.
 */
export async function* byteLines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let afterCR = false;
  for await (const chunk of chunks) {
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i];
      if (byte === LF || byte === CR) {
        // The LF of a CRLF (even one split across chunks) ends nothing: the CR already ended the line.
        if (!(byte === LF && afterCR)) yield joined(pending, chunk.subarray(start, i));
        pending = [];
        start = i + 1;
      }
      afterCR = byte === CR;
    }
    if (start < chunk.length) pending.push(chunk.slice(start));
  }
  if (pending.length > 0) yield joined(pending, new Uint8Array(0));
}

function joined(pending: Uint8Array[], tail: Uint8Array): Uint8Array {
  if (pending.length === 0) return tail;
  const line = new Uint8Array(pending.reduce((sum, part) => sum + part.length, tail.length));
  let offset = 0;
  for (const part of [...pending, tail]) {
    line.set(part, offset);
    offset += part.length;
  }
  return line;
}
