/** A value as an error message shows it: numbers and booleans as written, strings quoted, anything else by kind. */
export function shownValue(value) {
    if (typeof value === 'string')
        return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}…` : value);
    if (typeof value === 'number' || typeof value === 'boolean' || value === undefined)
        return String(value);
    return kindOf(value);
}
export function kindOf(value) {
    if (value === null)
        return 'null';
    if (Array.isArray(value))
        return 'array';
    return typeof value;
}
/**
 * Messages for the issues our schemas leave to zod, passed per parse (never set globally: other schemas in
 * the same process keep their own wording). A missing field says so; a wrong type says what arrived.
 */
export const readableIssue = (issue) => {
    if (issue.code !== 'invalid_type')
        return undefined;
    if (issue.input === undefined)
        return 'is required';
    // zod's number type refuses NaN and ±Infinity, which JSON cannot carry but a TypeScript caller can.
    if (issue.expected === 'number' && typeof issue.input === 'number')
        return `expected a finite number, got ${issue.input}`;
    return `expected ${issue.expected}, got ${kindOf(issue.input)}`;
};
/**
 * A field's rule as its error: every check of the field that fails says the rule and the value that broke it.
 * A value of the wrong kind is left to `readableIssue` ("expected number, got string"); a number that is not an
 * integer, or not finite, breaks the rule.
 */
export function rule(text) {
    return {
        error: (issue) => (issue.code === 'invalid_type' && typeof issue.input !== 'number' ? undefined : `${text}, got ${shownValue(issue.input)}`),
    };
}
/**
 * One `path: message` line per issue, `gold[1]` and `timeouts.generateHeartbeatSeconds` style; an issue
 * about the whole value is named `root`. An unknown key (usually a typo) is reported at its own path.
 */
export function problemLines(issues, root, separator = ': ') {
    const lines = issues.flatMap((issue) => issue.code === 'unrecognized_keys'
        ? issue.keys.map((key) => `${pathOf([...issue.path, key], root)}${separator}is not a known field`)
        : [`${pathOf(issue.path, root)}${separator}${issue.message}`]);
    // Two checks of one field can fail with the same words (a length and a byte limit); say it once.
    return [...new Set(lines)];
}
function pathOf(path, root) {
    if (path.length === 0)
        return root;
    return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : i === 0 ? String(key) : `.${String(key)}`)).join('');
}
//# sourceMappingURL=schema-problems.js.map