import type { TurnView } from '../store/read/trajectory-view.js';
import { TURN_LATENCY, type LatencyPhase } from '../store/read/turn-latency.js';

/** A turn's time in each phase, as the run page's latency charts define it (TURN_LATENCY); none where none was kept. */
export function turnTimings(turn: TurnView): { phase: LatencyPhase; ms: number | null; definition: string }[] {
  if (turn.queueMs === null && turn.generateMs === null && turn.verifyMs === null) return [];
  return [
    { phase: 'queue', ms: turn.queueMs, definition: TURN_LATENCY.queue },
    { phase: 'generate', ms: turn.generateMs, definition: TURN_LATENCY.generate },
    { phase: 'verify', ms: turn.verifyMs, definition: TURN_LATENCY.verify },
  ];
}

/** Milliseconds as a person reads them: 840 ms, 4.21 s, 2 min 5 s. */
export function duration(ms: number | null): string {
  if (ms === null) return '–';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  const seconds = Math.round(ms / 1000);
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}
