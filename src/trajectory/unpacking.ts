import type { PackingLayout } from './options.js';

/** One turn's tokens recovered from a packed trajectory: what the policy generated, and what followed it. */
export interface UnpackedTurn {
  /** C_t: tokens of context before the output. */
  contextLen: number;
  outputIds: number[];
  outputLogprobs: number[];
  outputVersions: number[];
  /** Tokens appended after the output (empty after the last turn: packing never stores them). */
  feedbackIds: number[];
}

/** The packed keys a trajectory is stored with (see packing.ts for how they were built). */
export interface PackedKeys {
  layout: PackingLayout | string;
  packedInputIds: readonly number[];
  packedLogprobs: readonly number[];
  tokenVersions: readonly number[];
  seqlens: readonly number[];
  promptLens: readonly number[];
  /** |O_t| per turn (the monitor records' answer_len). */
  outputLens: readonly number[];
}

/**
 * Inverts packTrajectory: the seed layout repeats the context per turn (logprobs are L_t − 1 long per turn), the
 * concat layout stores one sequence whose logprob entry i is log p(token i+1). The viewer shows each turn's output
 * and feedback exactly as the trainer receives them, so it reads them back from the packed keys, not from text.
 */
export function unpackTurns(keys: PackedKeys): UnpackedTurn[] {
  const full = fullSequence(keys);
  return keys.promptLens.map((contextLen, t) => {
    const outputLen = keys.outputLens[t] ?? 0;
    const end = contextLen + outputLen;
    const next = keys.promptLens[t + 1];
    return {
      contextLen,
      outputIds: full.ids.slice(contextLen, end),
      outputLogprobs: outputLogprobs(keys, t, outputLen),
      outputVersions: full.versions.slice(contextLen, end),
      feedbackIds: next === undefined ? [] : full.ids.slice(end, next),
    };
  });
}

/** The whole conversation as one sequence: the concat layout's only sequence, or the seed layout's last one. */
function fullSequence(keys: PackedKeys): { ids: readonly number[]; versions: readonly number[] } {
  if (keys.layout === 'concat' || keys.seqlens.length === 0) return { ids: keys.packedInputIds, versions: keys.tokenVersions };
  const lastStart = keys.seqlens.slice(0, -1).reduce((sum, len) => sum + len, 0);
  return { ids: keys.packedInputIds.slice(lastStart), versions: keys.tokenVersions.slice(lastStart) };
}

function outputLogprobs(keys: PackedKeys, t: number, outputLen: number): number[] {
  const contextLen = keys.promptLens[t]!;
  if (keys.layout === 'concat') return keys.packedLogprobs.slice(contextLen - 1, contextLen - 1 + outputLen);
  // Seed: turn t's logprobs are L_t − 1 entries, the output's being the last |O_t| of them.
  const start = keys.seqlens.slice(0, t).reduce((sum, len) => sum + len - 1, 0);
  const segmentEnd = start + keys.seqlens[t]! - 1;
  return keys.packedLogprobs.slice(segmentEnd - outputLen, segmentEnd);
}
