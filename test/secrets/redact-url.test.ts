import { describe, expect, it } from 'vitest';
import { parseSecrets, redactUrl } from '../../src/secrets/redact-url.js';
import { registerSecret, scrubSecrets } from '../../src/secrets/known-secrets.js';

/** Passwords with every character that splits a URL in the wrong place, alone and together. */
export const AWKWARD_PASSWORDS = ['p/ss', 'p@ss', 'p:ss', 'p?ss', 'p%ss', 'p#ss', '12/34', 's3cr/et@x:y?z%q#w'];

const forms = (password: string): [string, string][] => [
  ['raw userinfo', `postgres://ratchet:${password}@db.example:5432/ratchet`],
  ['encoded userinfo', `postgresql://ratchet:${encodeURIComponent(password)}@db.example:5432/ratchet?sslmode=require`],
  ['?password=', `postgres://ratchet@db.example:5432/ratchet?sslmode=require&password=${password}`],
  ['encoded ?password=', `postgres://db.example/ratchet?password=${encodeURIComponent(password)}`],
  ['key/value', `host=db.example port=5432 password=${password} dbname=ratchet`],
  ['quoted key/value', `host=db.example password='${password.replace(/'/g, "\\'")} and more' dbname=ratchet`],
  ['inference URL', `https://user:${password}@gpu.example:30000`],
];

describe('redactUrl', () => {
  for (const password of AWKWARD_PASSWORDS) {
    for (const [form, url] of forms(password)) {
      it(`hides "${password}" in the ${form} form and keeps the host`, () => {
        const redacted = redactUrl(url);
        expect(redacted).not.toContain(password);
        expect(redacted).not.toContain(encodeURIComponent(password));
        expect(redacted).toContain('***');
        expect(redacted).toMatch(/db\.example|gpu\.example/);
        expect(parseSecrets(url).secrets.some((secret) => secret.startsWith(password))).toBe(true);
      });
    }
  }

  it('leaves URLs without secrets as they are', () => {
    for (const url of ['postgres://ratchet@127.0.0.1:5432/ratchet', 'http://127.0.0.1:30000', '127.0.0.1:7233', 'postgres://h/db?sslmode=require']) {
      expect(redactUrl(url)).toBe(url);
    }
  });

  it('hides a lone token in an http URL userinfo', () => {
    expect(redactUrl('https://tok3n-value@gpu.example/v1')).toBe('https://***@gpu.example/v1');
  });
});

describe('scrubSecrets', () => {
  it('masks a registered secret and its percent-encoded form anywhere in a message', () => {
    registerSecret('a/b@c:d');
    expect(scrubSecrets('failed: password a/b@c:d or a%2Fb%40c%3Ad rejected')).toBe('failed: password *** or *** rejected');
  });
});
