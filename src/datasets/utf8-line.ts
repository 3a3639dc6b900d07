export type DecodedLine = { ok: true; text: string } | { ok: false; message: string };

// fatal: a byte sequence that is not UTF-8 is an error, not a silent U+FFFD in a prompt or a gold answer.
// ignoreBOM: a byte order mark stays in the text, where the row collector strips it on line 1 only.
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes one line of a dataset file, or says where its first byte that is not UTF-8 is. */
export function decodeLine(bytes: Uint8Array): DecodedLine {
  try {
    return { ok: true, text: decoder.decode(bytes) };
  } catch {
    const at = firstInvalidByte(bytes);
    const hex = (bytes[at] ?? 0).toString(16).toUpperCase().padStart(2, '0');
    return { ok: false, message: `not valid UTF-8 (byte 0x${hex} at byte ${at + 1} of the line); re-encode the file as UTF-8` };
  }
}

/** The offset of the first byte that starts no well-formed UTF-8 sequence (Unicode table 3-7), or -1. */
export function firstInvalidByte(bytes: Uint8Array): number {
  for (let i = 0; i < bytes.length;) {
    const sequence = wellFormed(bytes[i]!);
    if (sequence === undefined) return i;
    const [length, low, high] = sequence;
    for (let k = 1; k < length; k++) {
      const next = bytes[i + k];
      if (next === undefined || next < (k === 1 ? low : 0x80) || next > (k === 1 ? high : 0xbf)) return i;
    }
    i += length;
  }
  return -1;
}

/** For a lead byte: the sequence's length and the range its second byte must fall in. */
function wellFormed(lead: number): [length: number, low: number, high: number] | undefined {
  if (lead < 0x80) return [1, 0, 0];
  if (lead >= 0xc2 && lead <= 0xdf) return [2, 0x80, 0xbf];
  if (lead === 0xe0) return [3, 0xa0, 0xbf]; // no overlong forms
  if (lead === 0xed) return [3, 0x80, 0x9f]; // no UTF-16 surrogates
  if (lead >= 0xe1 && lead <= 0xef) return [3, 0x80, 0xbf];
  if (lead === 0xf0) return [4, 0x90, 0xbf];
  if (lead >= 0xf1 && lead <= 0xf3) return [4, 0x80, 0xbf];
  if (lead === 0xf4) return [4, 0x80, 0x8f]; // nothing above U+10FFFF
  return undefined;
}
