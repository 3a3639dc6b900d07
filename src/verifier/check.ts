import { answersEqual } from './equivalence.js';
import { extractGoldAnswers } from './extract-gold.js';
import { extractModelAnswer } from './extract-model.js';
import type { Verdict, VerifierOptions } from './types.js';

export type Judgement = Omit<Verdict, 'elapsedMs'>;

/**
 * Extraction, normalisation and equivalence, synchronously in the calling thread and without
 * a budget (use {@link VerifierPool} for untrusted input). Never throws: a failure is an
 * `error` verdict. Any gold answer matching counts. `options.extraction` picks where the model's
 * answer is found (default `stated`, see POLICIES.md).
 */
export function checkAnswer(gold: string | readonly string[], modelOutput: string, options: VerifierOptions = {}): Judgement {
  let golds: string[] = [];
  let predicted: string | null = null;
  try {
    if (typeof modelOutput !== 'string') throw new TypeError('model output is not a string');
    golds = extractGoldAnswers(gold);
    predicted = extractModelAnswer(modelOutput, options.extraction);
  } catch (error) {
    return failed(golds, predicted, error);
  }
  return judgeExtracted(golds, predicted);
}

/** The verdict for answers already extracted (the worker reports them first, for timeouts). */
export function judgeExtracted(golds: string[], predicted: string | null): Judgement {
  try {
    if (golds.length === 0) return { equal: false, status: 'error', predicted, gold: golds, detail: 'no gold answer' };
    if (predicted === null) return { equal: false, status: 'no_answer', predicted, gold: golds, detail: 'no answer found' };
    const rules: string[] = [];
    for (const answer of golds) {
      const match = answersEqual(answer, predicted);
      if (match.equal) return { equal: true, status: 'correct', predicted, gold: golds, detail: match.rule };
      rules.push(match.rule);
    }
    return { equal: false, status: 'wrong', predicted, gold: golds, detail: rules.join('; ') };
  } catch (error) {
    return failed(golds, predicted, error);
  }
}

function failed(golds: string[], predicted: string | null, error: unknown): Judgement {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { equal: false, status: 'error', predicted, gold: golds, detail };
}
