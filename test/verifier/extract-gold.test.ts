import { describe, expect, it } from 'vitest';
import { extractGoldAnswers } from '../../src/verifier/index.js';

describe('extractGoldAnswers', () => {
  it('keeps a bare answer as stored', () => {
    expect(extractGoldAnswers('\\left( 3, \\frac{\\pi}{2} \\right)')).toEqual(['\\left( 3, \\frac{\\pi}{2} \\right)']);
  });

  it('reads the boxed answer of a MATH solution', () => {
    expect(extractGoldAnswers('We have $r = 3$, so the answer is $\\boxed{(3, \\frac{\\pi}{2})}.$')).toEqual(['(3, \\frac{\\pi}{2})']);
  });

  it('reads the final number of a GSM8K worked answer', () => {
    expect(extractGoldAnswers('Natalia sold 48/2 = <<48/2=24>>24 clips in May.\n#### 72')).toEqual(['72']);
  });

  it('reads every solution of an AReaL list, without duplicates', () => {
    expect(extractGoldAnswers(['\\boxed{5}', 'so #### 5', 'The answer is 6.'])).toEqual(['5', '6']);
  });

  it('returns nothing for an empty gold', () => {
    expect(extractGoldAnswers('  ')).toEqual([]);
    expect(extractGoldAnswers([])).toEqual([]);
  });
});
