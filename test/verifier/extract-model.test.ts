import { describe, expect, it } from 'vitest';
import { checkAnswer } from '../../src/verifier/check.js';
import { extractModelAnswer } from '../../src/verifier/index.js';

describe('extractModelAnswer', () => {
  it('takes the last boxed answer, brace-matched', () => {
    expect(extractModelAnswer(String.raw`first \boxed{1}, then \boxed{\frac{a}{b^{2}}} done`)).toBe(String.raw`\frac{a}{b^{2}}`);
  });

  it('reads \\fbox like \\boxed', () => {
    expect(extractModelAnswer(String.raw`so \fbox{42}.`)).toBe('42');
  });

  it('keeps the outer box of nested boxes', () => {
    expect(extractModelAnswer(String.raw`\boxed{\boxed{3}}`)).toBe(String.raw`\boxed{3}`);
  });

  it('joins adjacent final boxes into a list', () => {
    expect(extractModelAnswer(String.raw`The roots are $\boxed{-2}$ and $\boxed{1}$.`)).toBe('-2, 1');
  });

  it('reads the Minerva "final answer is $…$" statement', () => {
    expect(extractModelAnswer('Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct.')).toBe('\\frac{1}{2}');
  });

  it('prefers a math statement written after the last box', () => {
    expect(extractModelAnswer(String.raw`\boxed{200} then \boxed{255}. Final Answer: The final answer is $10,455$.`)).toBe('10,455');
  });

  it('does not let a non-math statement override a box', () => {
    expect(extractModelAnswer(String.raw`\boxed{5}. I checked: the answer is correct.`)).toBe('5');
  });

  it('reads "The answer is …" up to the end of the sentence', () => {
    expect(extractModelAnswer('So the answer is 12,000,023. I hope it is correct.')).toBe('12,000,023');
    expect(extractModelAnswer('Final Answer: The largest $n$ is 34.')).toBe('34');
  });

  it('reads GSM8K "#### n" and drops calculator annotations', () => {
    expect(extractModelAnswer('48/2 = <<48/2=24>>24 clips\n#### 72')).toBe('72');
  });

  it('returns null when no answer is stated, even if numbers appear', () => {
    expect(extractModelAnswer('The sum is 5 and the product is 6.')).toBeNull();
    expect(extractModelAnswer('')).toBeNull();
  });

  it('returns null for an unbalanced box', () => {
    expect(extractModelAnswer('so \\boxed{5')).toBeNull();
  });

  it('finds no answer in a turn cut off inside its last box, whatever was stated before it', () => {
    // The length limit stops a turn right after `\boxed{`: it has stated no answer, so it is no_answer, not wrong.
    expect(extractModelAnswer('So x = 3. Therefore the final answer is \\boxed{')).toBeNull();
    expect(extractModelAnswer('The answer is $\\boxed{')).toBeNull();
    expect(extractModelAnswer('First \\boxed{2} maybe; then the final answer is \\boxed{\\frac{1}{')).toBeNull();
    expect(checkAnswer('3', 'So x = 3. Therefore the final answer is \\boxed{').status).toBe('no_answer');
    // A box closed before the cut still counts.
    expect(checkAnswer('3', 'So the answer is \\boxed{3}. Let me check: \\(3 + ').status).toBe('correct');
  });

  it('stays linear on 100 KB of unbalanced boxes', () => {
    const started = performance.now();
    expect(extractModelAnswer('\\boxed{'.repeat(15_000))).toBeNull();
    expect(performance.now() - started).toBeLessThan(500);
  });
});
