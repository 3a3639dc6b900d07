import type { PackingLayout } from './options.js';

/** One turn's tokens as stored by the activities that produced them. */
export interface TurnTokens {
  outputIds: readonly number[];
  outputLogprobs: readonly number[];
  /** The policy version each output token was generated under. */
  outputVersions: readonly number[];
  /** Appended after the output before the next turn; empty after the last turn. */
  feedbackIds: readonly number[];
  /**
   * The next turn's whole context, when an agent program's next call rewrote its history (a fork): the next turn starts
   * a sequence of its own from these tokens, and `feedbackIds` is empty.
   */
  forkIds?: readonly number[];
  noEos: boolean;
}

/** The seed's packed keys for one trajectory, plus the per-sequence lengths a trainer unpacks with. */
export interface PackedTokens {
  packedInputIds: number[];
  packedLogprobs: number[];
  /** 1 on context tokens, 0 on tokens the policy generated (the loss mask is its negation). */
  promptMask: number[];
  seqNoEosMask: boolean[];
  /** Lengths of the sequences in packedInputIds: L_t per turn (seed), or one per token sequence (concat: one, plus one per fork). */
  seqlens: number[];
  /** P_t per turn, whatever the layout (concat with forks: where turn t's output starts in packedInputIds). */
  promptLens: number[];
  /** One per entry of packedInputIds: the version a generated token came from, −1 for prompt and feedback. */
  tokenVersions: number[];
}

/** Marks tokens the policy did not generate (prompt, feedback) in tokenVersions. */
export const NOT_GENERATED = -1;

/**
 * Packs a trajectory. Turn t's context C_t is the prompt then every earlier output and feedback, exactly as
 * generated, so sequence t is a strict extension of sequence t−1 plus feedback: nothing is re-tokenized. After a fork
 * (an agent program rewrote its history: `forkIds`) C_t starts again from the fork's tokens; the concat layout then
 * closes its sequence and starts another, so each generated token is trained on in the context it was sampled in, once.
 */
export function packTrajectory(promptIds: readonly number[], turns: readonly TurnTokens[], layout: PackingLayout): PackedTokens {
  if (turns.length === 0) throw new Error('cannot pack a trajectory with no turns');
  const packed: PackedTokens = {
    packedInputIds: [],
    packedLogprobs: [],
    promptMask: [],
    seqNoEosMask: [],
    seqlens: [],
    promptLens: [],
    tokenVersions: [],
  };
  let context: number[] = [...promptIds];
  let contextVersions: number[] = new Array(promptIds.length).fill(NOT_GENERATED);
  // For the concat layout: logprob of every context token position (0 where it was not generated).
  let contextLogprobs: number[] = new Array(promptIds.length).fill(0);
  let contextMask: number[] = new Array(promptIds.length).fill(1);
  // The concat layout's sequences closed by forks, and where the open one starts in packedInputIds.
  const closed: { ids: number[]; logprobs: number[]; mask: number[]; versions: number[] }[] = [];
  let offset = 0;

  turns.forEach((turn, t) => {
    if (turn.outputIds.length !== turn.outputLogprobs.length || turn.outputIds.length !== turn.outputVersions.length) {
      throw new Error(
        `turn ${t}: ${turn.outputIds.length} output ids but ${turn.outputLogprobs.length} logprobs and ${turn.outputVersions.length} versions`,
      );
    }
    const contextLen = context.length;
    packed.promptLens.push(layout === 'concat' ? offset + contextLen : contextLen);
    packed.seqNoEosMask.push(turn.noEos);
    if (layout === 'seed') {
      pushAll(packed.packedInputIds, context, turn.outputIds);
      pushAll(packed.packedLogprobs, zeros(contextLen - 1), turn.outputLogprobs);
      pushAll(packed.promptMask, ones(contextLen), zeros(turn.outputIds.length));
      pushAll(packed.tokenVersions, contextVersions, turn.outputVersions);
      packed.seqlens.push(contextLen + turn.outputIds.length);
    }
    pushAll(context, turn.outputIds);
    pushAll(contextVersions, turn.outputVersions);
    pushAll(contextLogprobs, turn.outputLogprobs);
    pushAll(contextMask, zeros(turn.outputIds.length));
    if (t < turns.length - 1 && turn.forkIds) {
      closed.push({ ids: context, logprobs: contextLogprobs, mask: contextMask, versions: contextVersions });
      offset += context.length;
      context = [...turn.forkIds];
      contextVersions = new Array<number>(context.length).fill(NOT_GENERATED);
      contextLogprobs = zeros(context.length);
      contextMask = ones(context.length);
    } else if (t < turns.length - 1) {
      pushAll(context, turn.feedbackIds);
      pushAll(contextLogprobs, zeros(turn.feedbackIds.length));
      pushAll(contextMask, ones(turn.feedbackIds.length));
      pushAll(contextVersions, new Array<number>(turn.feedbackIds.length).fill(NOT_GENERATED));
    }
  });

  if (layout === 'concat') {
    const sequences = [...closed, { ids: context, logprobs: contextLogprobs, mask: contextMask, versions: contextVersions }];
    packed.packedInputIds = sequences.flatMap((sequence) => sequence.ids);
    // Entry i of a sequence's logprobs is log p(token i+1): each drops its first position.
    packed.packedLogprobs = sequences.flatMap((sequence) => sequence.logprobs.slice(1));
    packed.promptMask = sequences.flatMap((sequence) => sequence.mask);
    packed.seqlens = sequences.map((sequence) => sequence.ids.length);
    packed.tokenVersions = sequences.flatMap((sequence) => sequence.versions);
  }
  return packed;
}

function pushAll(target: number[], ...sources: readonly (readonly number[])[]): void {
  // Spread-push overflows the call stack past ~100K elements, and long contexts reach that.
  for (const source of sources) for (const value of source) target.push(value);
}

function zeros(n: number): number[] {
  return new Array<number>(Math.max(0, n)).fill(0);
}

function ones(n: number): number[] {
  return new Array<number>(n).fill(1);
}
