import { z } from 'zod';

/** Faults the simulated policy injects, each a probability per /generate request (or a fixed delay). */
export const faultSchema = z
  .object({
    /** Extra latency before answering, ms. */
    latencyMs: z.number().min(0).default(0),
    /** Answer HTTP 503. */
    errorRate: z.number().min(0).max(1).default(0),
    /** Never answer (the connection stays open until the client gives up). */
    hangRate: z.number().min(0).max(1).default(0),
    /** Destroy the socket mid-response. */
    dropRate: z.number().min(0).max(1).default(0),
    /** Refuse the request as invalid (HTTP 400 with SGLang's error body), as a real server does for bad parameters. */
    rejectRate: z.number().min(0).max(1).default(0),
    /** Report unhealthy on /health (503) while still answering requests. */
    unhealthy: z.boolean().default(false),
  })
  .strict();

export type Faults = z.infer<typeof faultSchema>;
export type FaultKind = 'error' | 'hang' | 'drop' | 'reject' | 'none';

export const NO_FAULTS: Faults = faultSchema.parse({});

/** Picks at most one fault for a request. */
export function drawFault(faults: Faults, random: () => number): FaultKind {
  let roll = random();
  for (const [kind, rate] of [
    ['error', faults.errorRate],
    ['hang', faults.hangRate],
    ['drop', faults.dropRate],
    ['reject', faults.rejectRate],
  ] as const) {
    if (roll < rate) return kind;
    roll -= rate;
  }
  return 'none';
}
