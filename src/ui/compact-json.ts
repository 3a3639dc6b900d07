/**
 * JSON for reading: a value that fits in `width` characters on one line stays on one line (`{"tests": 3, "passed": 2}`),
 * a bigger one is broken over lines, two spaces a level, its short members again kept whole.
 */
export function compactJson(value: unknown, width = 80): string {
  return render(value, '', width);
}

function render(value: unknown, indent: string, width: number): string {
  const flat = oneLine(value);
  if (flat.length + indent.length <= width || value === null || typeof value !== 'object') return flat;
  const inner = `${indent}  `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => inner + render(item ?? null, inner, width)).join(',\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([key, v]) => `${inner}${JSON.stringify(key)}: ${render(v, inner, width)}`).join(',\n')}\n${indent}}`;
}

/** One line, a space after each `:` and `,` between members (JSON.stringify's own spacing inside strings is kept). */
function oneLine(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value ?? null) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => oneLine(item ?? null)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
  return `{${entries.map(([key, v]) => `${JSON.stringify(key)}: ${oneLine(v)}`).join(', ')}}`;
}
