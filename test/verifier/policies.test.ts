import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../src/verifier/index.js';

// One test per documented policy (src/verifier/POLICIES.md), where reference verifiers disagree.
const status = (gold: string | string[], pred: string): string => checkAnswer(gold, pred).status;
const boxed = (answer: string): string => `The answer is $\\boxed{${answer}}$.`;

describe('verifier policies', () => {
  it('percent: a % on one side accepts the number or its decimal fraction, never bare 28 for 0.28', () => {
    expect(status('28\\%', boxed('28'))).toBe('correct');
    expect(status('28\\%', boxed('0.28'))).toBe('correct');
    expect(status('0.28', boxed('28\\%'))).toBe('correct');
    expect(status('0.28', boxed('28'))).toBe('wrong');
  });

  it('boxes: the last box counts; adjacent final boxes form a list, so hedging is wrong', () => {
    expect(status('5', '\\boxed{4} was a slip; in the end we get \\boxed{5}')).toBe('correct');
    expect(status('-2, 1', '$\\boxed{-2}$ and $\\boxed{1}$')).toBe('correct');
    expect(status('3', '$\\boxed{3}$ or $\\boxed{4}$')).toBe('wrong');
  });

  it('interval vs inequality: a gold inequality accepts the interval, a gold interval rejects the inequality', () => {
    expect(status('-2 \\le x \\le 7', boxed('[-2, 7]'))).toBe('correct');
    expect(status('[-2, 7]', boxed('-2 \\le x \\le 7'))).toBe('wrong');
  });

  it('decimal comma: "1,22" against one number is 1.22; a comma before three digits is a thousands separator', () => {
    expect(status('1.22', boxed('1,22'))).toBe('correct');
    expect(status('1222', boxed('1,222'))).toBe('correct');
    expect(status('1.222', boxed('1,222'))).toBe('wrong');
    expect(status('1, 2', boxed('1,2'))).toBe('correct');
  });

  it('mixed numbers: 3\\frac12 is 3.5, not 1.5', () => {
    expect(status('3\\frac{1}{2}', boxed('\\frac{7}{2}'))).toBe('correct');
    expect(status('\\frac{3}{2}', boxed('3\\frac{1}{2}'))).toBe('wrong');
  });

  it('decimal precision: 7 significant digits for an exact gold, rounding to a decimal gold', () => {
    expect(status('\\frac{1}{3}', boxed('0.3333333'))).toBe('correct');
    expect(status('\\frac{1}{3}', boxed('0.333'))).toBe('wrong');
    expect(status('7.78', boxed('\\frac{70}{9}'))).toBe('correct');
    expect(status('0.5', boxed('0.46'))).toBe('wrong');
  });

  it('numeric tolerance never makes 1450100 equal 1450000', () => {
    expect(status('1450000', boxed('1450100'))).toBe('wrong');
    expect(status('1450000', boxed('1,450,000'))).toBe('correct');
  });

  it('infinity: two power towers that overflow are not equal; ∞ equals only ∞', () => {
    expect(status('2^{2^{2^{2^{2^{2}}}}}', boxed('3^{3^{3^{3^{3^{3}}}}}'))).toBe('wrong');
    expect(status('\\infty', boxed('2^{2^{2^{2^{2^{2}}}}}'))).toBe('wrong');
    expect(status('\\infty', boxed('\\infty'))).toBe('correct');
  });

  it('no answer is its own verdict, not wrong', () => {
    const verdict = checkAnswer('5', 'I think it is 5 but I am not sure.');
    expect(verdict).toMatchObject({ equal: false, status: 'no_answer', predicted: null, gold: ['5'] });
  });

  it('a list of gold solutions matches when any one does', () => {
    expect(status(['\\boxed{7}', '\\boxed{8}'], boxed('8'))).toBe('correct');
  });

  it('statements: "Answer $…$", "$…$ is the solution", display math over lines; a last $…$ alone is no answer', () => {
    expect(status('9', 'Answer \\[ \n 9 \n \\]')).toBe('correct');
    expect(status('9', 'Answer $ \n 9 \n $')).toBe('wrong');
    expect(status('x \\ge 5', 'Therefore $x \\geq 5$ is the solution.')).toBe('correct');
    expect(status('3', 'Final Answer: Jane started growing Sphere 3 hours ago. I hope it is correct.')).toBe('correct');
    expect(status('19', 'Final Answer: the domain has 19 points. <|im_start|>user 20')).toBe('correct');
    expect(status('x < 3', 'We find that $x \\lt 3$.')).toBe('no_answer');
  });

  it('relations: a ratio or length on the left states its right side; an equation does not', () => {
    expect(status('V_{1}:V_{2}=11:21', boxed('11:21'))).toBe('correct');
    expect(status('|AB|=1', boxed('1'))).toBe('correct');
    expect(status('\\frac{NO}{BO}=\\frac{1}{\\sqrt{6}}', boxed('\\frac{1}{\\sqrt{6}}'))).toBe('correct');
    expect(status('2x + z = 1', boxed('1'))).toBe('wrong');
    expect(status('10/9', boxed('\\frac{1}{2} = \\frac{10}{9}'))).toBe('wrong');
  });

  it('lists: grouping braces are not a set, "or" lists, repeated items do not match a shorter list', () => {
    expect(status('(1,3)', boxed('{1,3}'))).toBe('correct');
    expect(status('(3,1)', boxed('{1,3}'))).toBe('wrong');
    expect(status('$21,16$ or $11$', boxed('21,16,11'))).toBe('correct');
    expect(status('(1,2),(3,4)', boxed('(1,2),(3,4),(3,4)'))).toBe('wrong');
  });

  it('presentation: doubled backslashes before commands and spaced mixed numbers', () => {
    expect(status('$\\\\left(\\\\frac{1}{5},\\\\frac{1}{6}\\\\right)$', boxed('\\left( \\frac{1}{5}, \\frac{1}{6} \\right)'))).toBe('correct');
    expect(status('9004/9', boxed('1 000 4/9'))).toBe('correct');
    expect(status('71/6', boxed('11\n5/6'))).toBe('wrong');
    expect(status('40/900', boxed('4 4/9pct'))).toBe('correct');
  });
});
