import { describe, expect, it } from 'vitest';
import { loadLabelledCases } from '../../bench/verify/case-sets.js';
import { checkAnswer } from '../../src/verifier/index.js';

// The project's labelled cases (also scored by `npm run bench:verify`), one test each.
const cases = loadLabelledCases();

describe('labelled cases', () => {
  it('cover every category with a few hundred cases', () => {
    const categories = new Set(cases.map((c) => c.category));
    expect(cases.length).toBeGreaterThanOrEqual(300);
    for (const category of [
      'extraction',
      'gold-shapes',
      'fractions',
      'numeric',
      'radicals',
      'pi',
      'infinity',
      'complex',
      'intervals',
      'sets-tuples',
      'matrices',
      'equations',
      'inequalities',
      'choice',
      'text',
      'units',
      'percent',
      'normalisation',
      'mixed-numbers',
      'decimal-comma',
      'adversarial',
    ]) {
      expect(categories, category).toContain(category);
    }
  });

  it.each(cases.map((c, k) => [`${k + 1} ${c.category}: ${JSON.stringify(c.gold).slice(0, 40)} vs ${c.pred.slice(-50)}`, c] as const))(
    '%s',
    (_, c) => {
      const verdict = checkAnswer(c.gold, c.pred);
      expect(verdict.status, verdict.detail).toBe(c.expected);
      expect(verdict.equal).toBe(c.expected === 'correct');
    },
  );
});
