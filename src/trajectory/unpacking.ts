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
  /** The next turn's whole context, when an agent program's next call forked the sequence (then feedbackIds is empty). */
  forkIds?: number[];
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
 * concat layout stores one sequence (one more per fork) whose logprob entry i is log p(token i+1). The viewer shows
 * each turn's output and feedback exactly as the trainer receives them, so it reads them back from the packed keys,
 * not from text. A turn an agent program's next call forked from has no feedback: `forkIds` is the next context.
 */
export function unpackTurns(keys: PackedKeys): UnpackedTurn[] {
  const sequences = sequencesOf(keys);
  // Turn t's sequence: its own (seed), or the concat sequence holding its output.
  const sequenceOf = (t: number) => (keys.layout === 'concat' ? holding(sequences, keys.promptLens[t]!) : sequences[t]!);
  return keys.promptLens.map((promptLen, t) => {
    const outputLen = keys.outputLens[t] ?? 0;
    const own = sequenceOf(t);
    const contextLen = keys.layout === 'concat' ? promptLen - own.start : promptLen;
    const end = contextLen + outputLen;
    const turn = {
      contextLen,
      outputIds: own.ids.slice(contextLen, end),
      outputLogprobs: outputLogprobs(keys, own, contextLen, outputLen),
      outputVersions: own.versions.slice(contextLen, end),
      feedbackIds: [] as number[],
    };
    if (t + 1 >= keys.promptLens.length) return turn;
    const next = sequenceOf(t + 1);
    const nextContextLen = keys.layout === 'concat' ? keys.promptLens[t + 1]! - next.start : keys.promptLens[t + 1]!;
    const extends_ = next === own || (keys.layout !== 'concat' && startsWith(next.ids, own.ids.slice(0, end)));
    return extends_ ? { ...turn, feedbackIds: next.ids.slice(end, nextContextLen) } : { ...turn, forkIds: next.ids.slice(0, nextContextLen) };
  });
}

interface PackedSequence {
  /** Where it starts in packedInputIds, and where its logprobs start in packedLogprobs. */
  start: number;
  logprobStart: number;
  ids: readonly number[];
  versions: readonly number[];
}

/** The packed sequences, by seqlens: a turn each (seed), or one plus one per fork (concat). */
function sequencesOf(keys: PackedKeys): PackedSequence[] {
  const lens = keys.seqlens.length === 0 ? [keys.packedInputIds.length] : keys.seqlens;
  let start = 0;
  return lens.map((len, k) => {
    const sequence = {
      start,
      logprobStart: start - k,
      ids: keys.packedInputIds.slice(start, start + len),
      versions: keys.tokenVersions.slice(start, start + len),
    };
    start += len;
    return sequence;
  });
}

/** A sequence's logprobs are one fewer than its tokens: entry i is log p(token i+1). */
function outputLogprobs(keys: PackedKeys, sequence: PackedSequence, contextLen: number, outputLen: number): number[] {
  const first = sequence.logprobStart + contextLen - 1;
  return keys.packedLogprobs.slice(first, first + outputLen);
}

/** The last sequence starting at or before `position`. */
function holding(sequences: readonly PackedSequence[], position: number): PackedSequence {
  let found = sequences[0]!;
  for (const sequence of sequences) if (sequence.start <= position) found = sequence;
  return found;
}

function startsWith(ids: readonly number[], prefix: readonly number[]): boolean {
  return prefix.length <= ids.length && prefix.every((id, i) => ids[i] === id);
}
