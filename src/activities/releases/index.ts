import type pg from 'pg';
import type { ModelTokenizer } from '../../tokens/model-tokenizer.js';
import type { VerifierPool } from '../../verifier/index.js';
import { appendFeedbackActivity } from './append-feedback.js';
import { verifyActivity } from './verify.js';

/**
 * CPU activities that only runs started by releases 1-2 call (`src/workflows/releases/release-two.ts`): release 3
 * made verify + feedback one environment step. Registered beside the live ones until the drop list
 * (src/workflows/releases/drop-list.ts) says they can go.
 */
export function releaseTwoActivities(deps: { pool: pg.Pool; tokenizer: ModelTokenizer; verifier: VerifierPool }) {
  return {
    verify: verifyActivity(deps.pool, deps.tokenizer, deps.verifier),
    appendFeedback: appendFeedbackActivity(deps.pool, deps.tokenizer),
  };
}
