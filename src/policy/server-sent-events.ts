/**
 * The `data:` payloads of a `text/event-stream` body, one per event, in order. SGLang's `/generate` and vLLM's
 * `/v1/completions` both stream `data: <json>\n\n` events and end with `data: [DONE]`; other SSE fields
 * (`event:`, `id:`, comments) are ignored. Leaving the loop early cancels the body, which closes the connection.
 * Lines end at `\n` (a `\r` before it is dropped); one space after `data:` is dropped.
 */
export async function* serverSentData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    // Lines are read in place and the buffer cut once per read (every chunk of a stream passes through here).
    let start = 0;
    let newline: number;
    while ((newline = buffer.indexOf('\n', start)) >= 0) {
      const end = newline > start && buffer.charCodeAt(newline - 1) === CR ? newline - 1 : newline;
      if (end === start) {
        const event = data;
        data = [];
        start = newline + 1;
        if (event.length > 0) yield event.length === 1 ? event[0]! : event.join('\n');
        continue;
      } else if (buffer.startsWith('data:', start)) {
        const from = start + 5 < end && buffer.charCodeAt(start + 5) === SPACE ? start + 6 : start + 5;
        data.push(buffer.slice(from, end));
      }
      start = newline + 1;
    }
    if (start > 0) buffer = buffer.slice(start);
  }
  // A last event without its blank line still counts; a half-written line does not (the connection dropped).
  if (data.length > 0) yield data.join('\n');
}

const CR = 13;
const SPACE = 32;
