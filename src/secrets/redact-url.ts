/**
 * Connection strings with their secrets hidden, found by parsing rather than by pattern: a password may hold any
 * of `/ @ : ? % #` unencoded, which a URL parser splits in the wrong place (`postgres://u:12/34@h` parses as host
 * `u`, port 12), so the userinfo is taken up to the LAST `@` after `scheme://`. Over-hiding a query value that
 * holds an `@` is the price; showing a password is never.
 */

/** Parameter names whose values are secrets, in URL queries and libpq key=value strings. */
const SECRET_KEYS = new Set(['password', 'sslpassword', 'passwd', 'pwd', 'api_key', 'apikey', 'api-key', 'token', 'access_token', 'secret']);
const MASK = '***';

/** Where a connection string's password sits, and the string with it masked. */
export interface ParsedSecret {
  redacted: string;
  /** The password or key values found (decoded where they were percent-encoded), for scrubbing other text. */
  secrets: string[];
}

/** `text` (a URL such as DATABASE_URL or an inference server's, or a libpq key=value string) with its secrets masked. */
export function redactUrl(text: string): string {
  return parseSecrets(text).redacted;
}

export function parseSecrets(text: string): ParsedSecret {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(text)?.[0];
  if (!scheme) return text.includes('=') ? keyValueSecrets(text) : { redacted: text, secrets: [] };
  const rest = text.slice(scheme.length);
  // A `?password=` value may hold an `@` too: the userinfo ends before the first secret query parameter.
  const secretParam = [...rest.matchAll(/[?&]([^=&?]*)=/g)].find((m) => SECRET_KEYS.has(m[1]!.toLowerCase()))?.index ?? rest.length;
  const at = rest.lastIndexOf('@', secretParam - 1);
  const secrets: string[] = [];
  let userinfo = '';
  if (at >= 0) {
    const info = rest.slice(0, at);
    const colon = info.indexOf(':');
    if (colon >= 0) {
      secrets.push(...decoded(info.slice(colon + 1)));
      userinfo = `${info.slice(0, colon)}:${MASK}@`;
    } else if (/^postgres(ql)?:/i.test(scheme)) {
      userinfo = `${info}@`; // a user name alone: Postgres reads the password from elsewhere
    } else {
      secrets.push(...decoded(info)); // `https://<token>@host`: the lone userinfo is the credential
      userinfo = `${MASK}@`;
    }
  }
  const after = at >= 0 ? rest.slice(at + 1) : rest;
  const question = after.indexOf('?');
  if (question < 0) return { redacted: scheme + userinfo + after, secrets };
  const params = after
    .slice(question + 1)
    .split('&')
    .map((param) => {
      const equals = param.indexOf('=');
      if (equals < 0 || !SECRET_KEYS.has(decoded(param.slice(0, equals))[0]!.toLowerCase())) return param;
      secrets.push(...decoded(param.slice(equals + 1)));
      return `${param.slice(0, equals)}=${MASK}`;
    });
  return { redacted: `${scheme}${userinfo}${after.slice(0, question)}?${params.join('&')}`, secrets };
}

/** libpq's `key=value key='quoted \' value'` form (what `psql "host=… password=…"` takes). */
function keyValueSecrets(text: string): ParsedSecret {
  const secrets: string[] = [];
  let out = '';
  let i = 0;
  while (i < text.length) {
    const space = /^\s*/.exec(text.slice(i))![0];
    out += space;
    i += space.length;
    const key = /^[^\s=]*/.exec(text.slice(i))![0];
    const equals = /^\s*=\s*/.exec(text.slice(i + key.length))?.[0];
    if (!key || equals === undefined) return { redacted: out + text.slice(i), secrets }; // not key=value past here
    const start = i + key.length + equals.length;
    let end = start;
    let value = '';
    if (text[start] === "'") {
      for (end = start + 1; end < text.length && text[end] !== "'"; end++) value += text[end] === '\\' ? (text[++end] ?? '') : text[end];
      end += 1;
    } else {
      for (; end < text.length && !/\s/.test(text[end]!); end++) value += text[end] === '\\' ? (text[++end] ?? '') : text[end];
    }
    const secret = SECRET_KEYS.has(key.toLowerCase());
    if (secret) secrets.push(value);
    out += secret ? `${key}=${MASK}` : text.slice(i, end);
    i = end;
  }
  return { redacted: out, secrets };
}

/** The raw text and, when it is valid percent-encoding of something else, its decoded form. */
function decoded(text: string): string[] {
  try {
    const plain = decodeURIComponent(text);
    return plain === text ? [text] : [text, plain];
  } catch {
    return [text];
  }
}
