/**
 * Bulk token data is stored as little-endian binary (bytea), 4 bytes a value, instead of JSON arrays:
 * an 80K-token context is 320 KB, not ~600 KB of text, and decodes without parsing.
 */
export function encodeInt32(values: readonly number[]): Buffer {
  const buffer = Buffer.allocUnsafe(values.length * 4);
  values.forEach((value, i) => buffer.writeInt32LE(value, i * 4));
  return buffer;
}

export function decodeInt32(buffer: Buffer): number[] {
  const values = new Array<number>(buffer.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = buffer.readInt32LE(i * 4);
  return values;
}

export function encodeFloat32(values: readonly number[]): Buffer {
  const buffer = Buffer.allocUnsafe(values.length * 4);
  values.forEach((value, i) => buffer.writeFloatLE(value, i * 4));
  return buffer;
}

export function decodeFloat32(buffer: Buffer): number[] {
  const values = new Array<number>(buffer.length / 4);
  for (let i = 0; i < values.length; i++) values[i] = buffer.readFloatLE(i * 4);
  return values;
}
