import { createHmac, timingSafeEqual } from 'node:crypto';

const PREFIX = 'ratchet-agent';

/** Why an agent program's key is refused: every kind is an HTTP 401, the kind only sharpens the message. */
export type AgentKeyProblem = 'missing' | 'malformed' | 'other-trajectory' | 'forged';

/** An agent program's call without a key this trajectory's endpoint issued. Not retryable: the key will not change. */
export class AgentKeyError extends Error {
  override readonly name = 'AgentKeyError';
  constructor(
    readonly kind: AgentKeyProblem,
    readonly trajectoryId: string,
  ) {
    super(`${KEY_PROBLEMS[kind]}: send the API key this run of trajectory ${trajectoryId}'s agent program was given, as a Bearer token`);
  }
}

const KEY_PROBLEMS: Record<AgentKeyProblem, string> = {
  missing: 'no API key',
  malformed: 'the API key is not a Ratchet agent key',
  'other-trajectory': "the API key is another trajectory's",
  forged: 'the API key was not issued by this worker',
};

/**
 * The API key one run (`attempt`) of a trajectory's agent program is given: `ratchet-agent.<id>.<attempt>.<mac>`, the id
 * base64url-encoded (trajectory ids hold `/` and whatever a dataset names its rows), the mac an HMAC-SHA256 of the id
 * and the attempt under the worker's secret. The run is in the key, not in a header the program would have to send,
 * so an unmodified OpenAI client tells the endpoint which run it belongs to.
 */
export function agentKey(secret: string | Uint8Array, trajectoryId: string, attempt: number): string {
  return `${PREFIX}.${Buffer.from(trajectoryId).toString('base64url')}.${attempt}.${mac(secret, trajectoryId, attempt)}`;
}

/**
 * The run (`attempt`) a key was issued for, when it is a key for `trajectoryId` under `secret`; AgentKeyError otherwise.
 * The mac is compared in constant time, so timing shows nothing of the expected one.
 */
export function verifyAgentKey(secret: string | Uint8Array, key: string | undefined, trajectoryId: string): { attempt: number } {
  if (!key) throw new AgentKeyError('missing', trajectoryId);
  const parts = key.split('.');
  const [prefix, encodedId, attemptText, presented] = parts;
  if (parts.length !== 4 || prefix !== PREFIX || !/^(0|[1-9]\d{0,8})$/.test(attemptText!)) throw new AgentKeyError('malformed', trajectoryId);
  if (Buffer.from(encodedId!, 'base64url').toString() !== trajectoryId) throw new AgentKeyError('other-trajectory', trajectoryId);
  const attempt = Number(attemptText);
  const expected = Buffer.from(mac(secret, trajectoryId, attempt));
  const sent = Buffer.from(presented!);
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) throw new AgentKeyError('forged', trajectoryId);
  return { attempt };
}

function mac(secret: string | Uint8Array, trajectoryId: string, attempt: number): string {
  // JSON keeps the two fields apart whatever the id holds; the prefix keeps these macs from meaning anything elsewhere.
  return createHmac('sha256', secret)
    .update(JSON.stringify([PREFIX, trajectoryId, attempt]))
    .digest('base64url');
}
