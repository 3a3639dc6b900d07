import { z } from 'zod';
import { InvalidConfiguration } from '../config.js';
import { DEFAULT_UI_PORT } from './server.js';

/** RATCHET_UI_PORT, or 8300. The UI always binds loopback; only the port is configurable. */
export function uiPort(env: NodeJS.ProcessEnv = process.env): number {
  const parsed = z.coerce.number().int().min(0).max(65535).safeParse(env.RATCHET_UI_PORT || DEFAULT_UI_PORT);
  if (!parsed.success) throw new InvalidConfiguration(`invalid configuration: RATCHET_UI_PORT: expected a port number (got ${JSON.stringify(env.RATCHET_UI_PORT)})`);
  return parsed.data;
}
