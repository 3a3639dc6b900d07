import { describe, expect, it } from 'vitest';
import { type LabelledCase, loadIssue16Cases } from '../../bench/verify/case-sets.js';
import { checkAnswer } from '../../src/verifier/index.js';

// Issue 16's labelled cases (also scored by `npm run bench:verify`), in both extractions:
// `tuned` written while changing the verifier, `advance` written before any change.
const agrees = (c: LabelledCase): boolean => {
  const verdict = checkAnswer(c.gold, c.pred, { extraction: c.extraction });
  return c.binary ? (verdict.status === 'correct') === (c.expected === 'correct') : verdict.status === c.expected;
};
const describeCase = (c: LabelledCase): string =>
  `${c.set}/${c.category}: gold ${JSON.stringify(c.gold).slice(0, 50)} pred ${JSON.stringify(c.pred).slice(-60)}`;

describe.each(['tuned', 'advance'] as const)('issue 16 cases (%s)', (which) => {
  const cases = loadIssue16Cases(which);

  it('cover every class of the issue', () => {
    const categories = new Set(cases.map((c) => c.category));
    for (const category of ['bare', 'boxes', 'precision', 'repeating', 'approx', 'units', 'choice', 'binomial', 'set-builder', 'percent']) {
      expect(categories, category).toContain(category);
    }
  });

  it('have no false accept in either extraction', () => {
    const falseAccepts = cases.filter(
      (c) => c.expected !== 'correct' && checkAnswer(c.gold, c.pred, { extraction: c.extraction }).status === 'correct',
    );
    expect(falseAccepts.map(describeCase)).toEqual([]);
  });

  it('agree on at least 97% in each extraction', () => {
    for (const set of new Set(cases.map((c) => c.set))) {
      const inSet = cases.filter((c) => c.set === set);
      const disagreements = inSet.filter((c) => !agrees(c));
      expect(1 - disagreements.length / inSet.length, disagreements.map(describeCase).join('\n')).toBeGreaterThanOrEqual(0.97);
    }
  });
});
