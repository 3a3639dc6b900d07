import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../src/verifier/index.js';

// Issue 16's rules (src/verifier/POLICIES.md), one test per behaviour.
const status = (gold: string | string[], pred: string): string => checkAnswer(gold, pred).status;
const compatible = (gold: string, pred: string): string => checkAnswer(gold, pred, { extraction: 'math-verify' }).status;
const boxed = (answer: string): string => `The answer is $\\boxed{${answer}}$.`;

describe('verifier policies (issue 16)', () => {
  it('compares an output that is itself an answer: signed, grouped, fractions, x = …, one math span', () => {
    expect(status('-7', '- 7')).toBe('correct');
    expect(status('12345', '12 345')).toBe('correct');
    expect(status('1000000', '1,000,000')).toBe('correct');
    expect(status('\\frac{3}{4}', '3/4')).toBe('correct');
    expect(status('5', 'x = 5')).toBe('correct');
    expect(status('\\frac{1}{3}', '\\[\\frac{1}{3}.\\]')).toBe('correct');
    expect(status('Monday', 'Monday')).toBe('correct');
    expect(status('5', 'x = 6')).toBe('wrong');
  });

  it('keeps a sentence without a stated answer as no_answer, in prose or in two words', () => {
    expect(status('5', 'no idea')).toBe('no_answer');
    expect(status('7', 'I think 7')).toBe('no_answer');
    expect(status('7', 'Adding the two counts gives $7$.')).toBe('no_answer');
    expect(status('6', 'Let me think.\n\nThe sum is 6')).toBe('no_answer');
  });

  it('math-verify extraction also reads the last math span or number of prose', () => {
    expect(compatible('7', 'Adding the two counts gives $7$.')).toBe('correct');
    expect(compatible('2/3', 'So the probability is 2/3. <|im_start|>user 5')).toBe('correct');
    expect(compatible('8', 'Adding the two counts gives $7$.')).toBe('wrong');
    expect(compatible('3', '$\\boxed{3}$ and later the value 4 appears')).toBe('correct');
  });

  it('joins the boxes of one final statement: parts, named values, labelled boxes; not a correction', () => {
    expect(status('(3, 3), (1, 1)', '$$\\boxed{(3, 3)} \\text{ for part (a) and } \\boxed{(1, 1)}$$')).toBe('correct');
    expect(status('f(x) = x^2, g(x) = 2x', 'Hence $f(x) = \\boxed{x^2}$ and $g(x) = \\boxed{2x}$.')).toBe('correct');
    expect(status('12', '$\\boxed{12}$ or possibly $\\boxed{13}$')).toBe('wrong');
    expect(status('3', '$\\boxed{2}$ is wrong; actually it is $\\boxed{3}$')).toBe('correct');
    expect(status('5', 'first \\boxed{1}, then \\boxed{5}')).toBe('correct');
  });

  it('reads a gold holding several boxes as all the boxes of its final statement', () => {
    expect(status('\\boxed{1} papers and \\boxed{2} bins', '$\\boxed{1,2}$')).toBe('correct');
    expect(status('\\boxed{1} no no no no no \\boxed{2}', '$\\boxed{1,2}$')).toBe('wrong');
  });

  it('needs a decimal to agree with an exact value to 6 places, not to the few digits it was rounded to', () => {
    expect(status('\\sqrt{3}', boxed('1.7320508'))).toBe('correct');
    expect(status('\\sqrt{3}', boxed('1.73205'))).toBe('wrong');
    expect(status('\\pi', boxed('3.14159'))).toBe('wrong');
    expect(status('\\frac{1}{800000}', boxed('0.000001'))).toBe('wrong');
  });

  it('never accepts a decimal carrying more or fewer places than a decimal gold', () => {
    expect(status('16386.17', boxed('16386.169'))).toBe('wrong');
    expect(status('2.5', boxed('2.54'))).toBe('wrong');
    expect(status('3.70', boxed('3.7'))).toBe('correct');
    expect(status('7.78', boxed('\\frac{70}{9}'))).toBe('correct');
  });

  it('matches matrices only with the same shape; a tuple matches either vector', () => {
    expect(status('\\begin{pmatrix}1\\\\2\\\\3\\end{pmatrix}', boxed('\\begin{pmatrix}1&2&3\\end{pmatrix}'))).toBe('wrong');
    expect(status('\\begin{pmatrix}1\\\\2\\end{pmatrix}', boxed('(1, 2)'))).toBe('correct');
  });

  it('reads a % on the prediction only as ÷100, except against an integer gold', () => {
    expect(status('40/9', '4 4/9%')).toBe('wrong');
    expect(status('40/900', '4 4/9%')).toBe('correct');
    expect(status('2.5', boxed('2.5\\%'))).toBe('wrong');
    expect(status('28', boxed('28\\%'))).toBe('correct');
  });

  it('reads repeating decimals as their exact fraction', () => {
    expect(status('\\frac{1}{3}', boxed('0.\\overline{3}'))).toBe('correct');
    expect(status('\\frac{1}{6}', boxed('0.1\\overline{6}'))).toBe('correct');
    expect(status('\\frac{1}{3}', boxed('0.\\overline{6}'))).toBe('wrong');
  });

  it('ignores an approximation after a value, and words labelling a value', () => {
    expect(status('\\frac{\\sqrt{3}}{3}', boxed('\\frac{\\sqrt{3}}{3} \\approx 0.577'))).toBe('correct');
    expect(status('21', boxed('21 \\text{ canoes}'))).toBe('correct');
    expect(status('21', boxed('22 \\text{ canoes}'))).toBe('wrong');
  });

  it('matches a choice letter followed by its option text', () => {
    expect(status('C', boxed('C: 42'))).toBe('correct');
    expect(status('\\text{(D)}', boxed('D. 17'))).toBe('correct');
    expect(status('B', boxed('C: 42'))).toBe('wrong');
  });

  it('tests factorial and binomial identities through the gamma function', () => {
    expect(status('\\binom{2n}{n}', boxed('\\frac{(2n)!}{(n!)^2}'))).toBe('correct');
    expect(status('\\binom{2n}{n}', boxed('\\frac{(2n)!}{n!}'))).toBe('wrong');
  });

  it('reads set-builder notation as the interval it denotes, on either side', () => {
    expect(status('(-\\infty, 3)', boxed('\\{x \\mid x < 3\\}'))).toBe('correct');
    expect(status('(-\\infty, 3]', boxed('\\{x \\mid x < 3\\}'))).toBe('wrong');
    expect(status('\\{x \\mid x \\ge 2\\}', boxed('[2, \\infty)'))).toBe('correct');
  });

  it('reads groups of assignments separated by ; as tuples', () => {
    expect(status('p=5,q=2;p=7,q=2', boxed('(5,2),(7,2)'))).toBe('correct');
    expect(status('p=5,q=2;p=7,q=2', boxed('(2,5),(7,2)'))).toBe('wrong');
  });
});
