import { describe, expect, it } from 'vitest';
import { answerKey, normaliseAnswer } from '../../src/verifier/normalise.js';

const text = (raw: string): string => normaliseAnswer(raw).text;

describe('normaliseAnswer', () => {
  it('maps \\dfrac and \\tfrac to \\frac and drops \\left / \\right', () => {
    expect(text('\\left( \\dfrac{1}{2}, \\tfrac{3}{4} \\right)')).toBe('( \\frac{1}{2}, \\frac{3}{4} )');
  });

  it('removes \\! and LaTeX spacing', () => {
    expect(answerKey(text('\\frac{1}{3}\\! \\quad'))).toBe('\\frac{1}{3}');
  });

  it('drops thousands separators only when the whole answer is one number', () => {
    expect(text('1{,}000')).toBe('1000');
    expect(text('10,\\!000')).toBe('10000');
    expect(text('1 000 000')).toBe('1000000');
    expect(text('x = 12,345')).toBe('x =12345');
    expect(text('1,2')).toBe('1,2');
  });

  it('drops units written in \\text and as trailing words', () => {
    expect(text('15\\mbox{ cm}^2')).toBe('15');
    expect(text('125 miles')).toBe('125');
    expect(text('18 square feet')).toBe('18');
  });

  it('keeps a \\text answer as its content', () => {
    expect(text('\\text{Evelyn}')).toBe('Evelyn');
  });

  it('drops degree marks and flags percent', () => {
    expect(text('90^\\circ')).toBe('90');
    expect(normaliseAnswer('28\\%')).toEqual({ text: '28', percent: true });
    expect(normaliseAnswer('28 percent')).toEqual({ text: '28', percent: true });
  });

  it('trims sentence punctuation but keeps an ellipsis and a factorial', () => {
    expect(text('42.')).toBe('42');
    expect(text('\\frac{1}{3},')).toBe('\\frac{1}{3}');
    expect(text('1, 2, 3, \\ldots')).toBe('1, 2, 3, \\ldots');
    expect(text('5!')).toBe('5!');
  });

  it('reads mixed numbers with a proper fraction', () => {
    expect(text('3\\frac{1}{2}')).toBe('(3+\\frac{1}{2})');
    expect(text('3 1/2')).toBe('(3+\\frac{1}{2})');
    expect(text('x^2\\frac{1}{2}')).toBe('x^2\\frac{1}{2}');
  });

  it('turns number words into digits', () => {
    expect(text('twenty-one')).toBe('21');
    expect(text('Five')).toBe('5');
  });

  it('writes infinity one way', () => {
    expect(text('∞')).toBe('\\infty');
    expect(text('-infinity')).toBe('-\\infty');
  });
});
