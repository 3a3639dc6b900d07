import { z } from 'zod';
import { InvalidConfiguration } from '../config.js';
import { DEFAULT_UI_PORT } from './server.js';

/** RATCHET_UI_PORT, or 8300. The UI always binds loopback; only the port is configurable. */
export function uiPort(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = z.coerce
    .number()
    .int()
    .min(0)
    .max(65535)
    .safeParse(env.RATCHET_UI_PORT || DEFAULT_UI_PORT);
  if (!parsed.success)
    throw new InvalidConfiguration(`invalid configuration: RATCHET_UI_PORT: expected a port number (got ${JSON.stringify(env.RATCHET_UI_PORT)})`);
  return parsed.data;
}

/**
 * RATCHET_UI_HOST, or loopback. Only a container sets it (to 0.0.0.0, so its port mapping reaches the server; the
 * mapping itself binds the host's loopback).
 */
export function uiHost(env: NodeJS.ProcessEnv = process.env): string {
  return env.RATCHET_UI_HOST || '127.0.0.1';
}
