/**
 * A value's JSON with every object's keys sorted and no spacing: two values equal by meaning (a tool call's arguments
 * re-serialised by an SDK with other spacing or key order) give the same text. `undefined` members are left out, as
 * JSON.stringify leaves them out.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortedKeys(value));
}

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, member]) => member !== undefined);
  return Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([key, member]) => [key, sortedKeys(member)]));
}
