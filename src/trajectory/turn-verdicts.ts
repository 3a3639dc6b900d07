import type { TurnVerdict } from './turn.js';

/**
 * Every verdict a stored turn can carry: the math verifier's and the code judge's (TurnVerdict), less the verifier's
 * `error`, which never reaches a row (the environment step fails the turn instead: throwIfVerifierFailed).
 */
export type StoredVerdict = Exclude<TurnVerdict, 'error'>;

const ALL: Record<StoredVerdict, true> = { correct: true, wrong: true, no_answer: true, timeout: true, runtime_error: true };

/** The stored verdicts, in the order filters offer them. Keyed by the type above, so a new verdict cannot be left out. */
export const STORED_VERDICTS = Object.keys(ALL) as readonly StoredVerdict[];
