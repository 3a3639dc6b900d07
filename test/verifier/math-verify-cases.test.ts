import { describe, expect, it } from 'vitest';
import { loadMathVerifyRows } from '../../bench/verify/case-sets.js';
import { checkAnswer } from '../../src/verifier/index.js';

// Math-Verify's own test cases (see math-verify-cases.README.md), held out from tuning: the
// labels are Math-Verify's and are never edited. Cases where POLICIES.md deliberately differs
// carry `policy_differs` and are counted apart.
const rows = loadMathVerifyRows();
const scored = rows.filter((row) => row.policy_differs === undefined);
const differing = rows.filter((row) => row.policy_differs !== undefined);

const accepts = (row: (typeof rows)[number]): boolean => checkAnswer(row.gold, row.pred).status === 'correct';
const describeRow = (row: (typeof rows)[number]): string =>
  `${row.source}: gold ${JSON.stringify(row.gold).slice(0, 60)} pred ${JSON.stringify(row.pred).slice(-60)}`;

describe("Math-Verify's test cases", () => {
  it('are a few hundred, with labels of both kinds and few policy differences', () => {
    expect(rows.length).toBeGreaterThanOrEqual(150);
    expect(rows.filter((row) => row.expected).length).toBeGreaterThan(50);
    expect(rows.filter((row) => !row.expected).length).toBeGreaterThan(50);
    expect(differing.length).toBeLessThanOrEqual(33);
    for (const row of rows) expect(row.source).toMatch(/^math-verify\/test_\w+\.py:/);
  });

  it('never accepts what Math-Verify rejects, and agrees on at least 98%', () => {
    const falseAccepts = scored.filter((row) => !row.expected && accepts(row));
    const falseRejects = scored.filter((row) => row.expected && !accepts(row));
    expect(falseAccepts.map(describeRow)).toEqual([]);
    const agreement = (scored.length - falseRejects.length) / scored.length;
    expect(agreement, falseRejects.map(describeRow).join('\n')).toBeGreaterThanOrEqual(0.98);
  });

  it('gives the documented verdict where POLICIES.md differs from Math-Verify', () => {
    const notAsDocumented = differing.filter((row) => accepts(row) === row.expected);
    expect(notAsDocumented.map(describeRow)).toEqual([]);
  });
});
