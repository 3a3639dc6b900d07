/**
 * The `data:` payloads of a `text/event-stream` body, one per event, in order. SGLang's `/generate` and vLLM's
 * `/v1/completions` both stream `data: <json>\n\n` events and end with `data: [DONE]`; other SSE fields
 * (`event:`, `id:`, comments) are ignored. Leaving the loop early cancels the body, which closes the connection.
 */
export async function* serverSentData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let buffer = '';
  let data: string[] = [];
  for await (const bytes of body) {
    buffer += decoder.decode(bytes, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield data.join('\n');
        data = [];
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      }
    }
  }
  // A last event without its blank line still counts; a half-written line does not (the connection dropped).
  if (data.length > 0) yield data.join('\n');
}
