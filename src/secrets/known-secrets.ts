import { parseSecrets } from './redact-url.js';

const MASK = '***';
// Shorter values would mask ordinary words in a message; no generated or configured secret is this short.
const MIN_LENGTH = 4;
const registered = new Set<string>();

/**
 * Remembers a secret this process holds (the embedded Postgres password, an API key) so that `scrubSecrets`
 * masks it wherever it turns up: in an error from a library, in a log line. Also its percent-encoded form.
 */
export function registerSecret(value: string | undefined): void {
  if (!value || value.length < MIN_LENGTH) return;
  registered.add(value);
  registered.add(encodeURIComponent(value));
}

/** Registers the secrets the environment names: passwords inside DATABASE_URL and RATCHET_POLICY_URL, API keys. */
export function registerEnvironmentSecrets(env: NodeJS.ProcessEnv = process.env): void {
  for (const name of ['DATABASE_URL', 'RATCHET_POLICY_URL']) {
    for (const secret of parseSecrets(env[name] ?? '').secrets) registerSecret(secret);
  }
  for (const name of ['TEMPORAL_API_KEY', 'RATCHET_POLICY_API_KEY', 'PGPASSWORD']) registerSecret(env[name]);
}

/** `text` with every registered secret masked, longest first (so a secret inside another is not half-masked). */
export function scrubSecrets(text: string): string {
  let out = text;
  for (const secret of [...registered].sort((a, b) => b.length - a.length)) out = out.split(secret).join(MASK);
  return out;
}
