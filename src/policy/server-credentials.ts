import { registerSecret } from '../secrets/known-secrets.js';

/** Where an inference server is, and the headers that authenticate every request to it. */
export interface PolicyServerAddress {
  /** The base URL without credentials or a trailing slash: safe to print, and what fetch accepts. */
  url: string;
  headers: Record<string, string>;
}

/**
 * Splits the credentials out of an inference server's address. An API key (SGLang and vLLM `--api-key`) becomes
 * `Authorization: Bearer`; a `user:password@` in the URL becomes Basic auth (a proxy in front of the server), since
 * fetch refuses a URL with credentials and would print it in its error. Both are registered as secrets, so no
 * log line or error message shows them.
 */
export function policyServerAddress(url: string, apiKey?: string): PolicyServerAddress {
  const headers: Record<string, string> = {};
  let base = url;
  try {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      const user = decodeURIComponent(parsed.username);
      const password = decodeURIComponent(parsed.password);
      registerSecret(password || user);
      headers['authorization'] = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
      parsed.username = '';
      parsed.password = '';
      base = parsed.toString();
    }
  } catch {
    // not a URL: the first request fails with PolicyUnavailable naming it
  }
  if (apiKey) {
    registerSecret(apiKey);
    headers['authorization'] = `Bearer ${apiKey}`;
  }
  return { url: base.replace(/\/+$/, ''), headers };
}
