export type { AnswerExtraction, Verdict, VerdictStatus, VerifierOptions, VerifierPoolOptions } from './types.js';
export { checkAnswer } from './check.js';
export { extractModelAnswer } from './extract-model.js';
export { extractGoldAnswers } from './extract-gold.js';
export { VerifierPool } from './pool.js';
