// TEMPORARY placeholder written by the pipeline engineer so the rest of src/ compiles.
// The verifier engineer replaces this whole file (same exported interface).
export type VerdictStatus = 'correct' | 'wrong' | 'no_answer' | 'timeout' | 'error';
export interface Verdict { equal: boolean; status: VerdictStatus; predicted: string | null; gold: string[]; detail?: string; elapsedMs: number }
export function extractModelAnswer(text: string): string | null {
  const i = text.lastIndexOf('\\boxed{');
  if (i < 0) return null;
  let depth = 0;
  for (let j = i + 7; j < text.length; j++) {
    if (text[j] === '{') depth++;
    else if (text[j] === '}') { if (depth === 0) return text.slice(i + 7, j); depth--; }
  }
  return null;
}
export function extractGoldAnswers(gold: string | string[]): string[] {
  return (Array.isArray(gold) ? gold : [gold]).map((g) => (g.includes('####') ? g.split('####').pop()!.trim() : extractModelAnswer(g) ?? g.trim()));
}
export function checkAnswer(gold: string | string[], modelOutput: string): Omit<Verdict, 'elapsedMs'> {
  const predicted = extractModelAnswer(modelOutput);
  const golds = extractGoldAnswers(gold);
  if (predicted === null) return { equal: false, status: 'no_answer', predicted, gold: golds };
  const equal = golds.some((g) => g.replace(/\s/g, '') === predicted.replace(/\s/g, ''));
  return { equal, status: equal ? 'correct' : 'wrong', predicted, gold: golds };
}
export interface VerifierPoolOptions { size?: number; budgetMs?: number }
export class VerifierPool {
  constructor(readonly options: VerifierPoolOptions = {}) {}
  async verify(gold: string | string[], modelOutput: string): Promise<Verdict> { return { ...checkAnswer(gold, modelOutput), elapsedMs: 0 }; }
  async close(): Promise<void> {}
}
