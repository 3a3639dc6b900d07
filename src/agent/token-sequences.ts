import type { ForkReason } from './fork-reason.js';

/** Why a token sequence started: the agent's first call, or a call that rewrote the history of the one before. */
export type SequenceStart = { kind: 'first-call'; call: number } | { kind: 'fork'; call: number; reason: ForkReason };

/** The tokens one call generated, as `ids.slice(start, end)` of its sequence (its EOS included when it wrote one). */
export interface GeneratedSpan {
  call: number;
  start: number;
  end: number;
}

/**
 * One token sequence of an agent's trajectory: the tokens the policy saw and wrote, never re-tokenized. A trajectory
 * whose agent never rewrites its history has one; each fork starts another and leaves the earlier ones as they were,
 * so every generated token is trained on in the context it was sampled in.
 */
export interface TokenSequence {
  start: SequenceStart;
  ids: number[];
  /** The generated spans, in order: the trained-on tokens. Everything else was written by the chat template. */
  generated: GeneratedSpan[];
}

/** 1 where the policy generated the token (the loss mask), 0 where the template wrote it; as long as `ids`. */
export function generatedMask(sequence: TokenSequence): number[] {
  const mask = new Array<number>(sequence.ids.length).fill(0);
  for (const span of sequence.generated) mask.fill(1, span.start, span.end);
  return mask;
}
