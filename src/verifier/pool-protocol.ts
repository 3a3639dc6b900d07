import type { Judgement } from './check.js';
import type { AnswerExtraction } from './types.js';

/** A check sent to a verifier thread. */
export interface VerifierRequest {
  id: number;
  gold: string | readonly string[];
  output: string;
  extraction: AnswerExtraction;
}

/** What a verifier thread sends back: readiness, the extracted answers, then the verdict. */
export type VerifierResponse =
  | { kind: 'ready' }
  | { kind: 'extracted'; id: number; gold: string[]; predicted: string | null }
  | { kind: 'verdict'; id: number; judgement: Judgement };
