import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import {
  adversarialCases,
  type LabelledCase,
  loadGsm8k,
  loadIssue16Cases,
  loadLabelledCases,
  loadMath500,
  loadMathVerifyCases,
} from './verify/case-sets.js';
import { checkAnswer } from '../src/verifier/check.js';
import { VerifierPool } from '../src/verifier/pool.js';
import { warmUpSymbolic } from '../src/verifier/symbolic.js';

interface SetReport {
  set: string;
  checks: number;
  agree: number;
  falseAccepts: number;
  falseRejects: number;
  other: number;
}

const percentile = (sorted: readonly number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;

/**
 * `npm run bench:verify`: agreement with labelled verdicts on MATH-500, GSM8K, the project's
 * own cases, issue 16's tuned and written-in-advance cases (in both extractions) and Math-Verify's
 * own test cases; false accepts / rejects; in-thread latency; pool
 * throughput; adversarial inputs against the budget. Data directory: first argument, else `../shared/data`.
 */
async function main(argv: readonly string[] = process.argv.slice(2)): Promise<number> {
  const dataDir = resolve(argv[0] ?? '../shared/data');
  const cases = [
    ...loadLabelledCases(),
    ...loadMathVerifyCases(),
    ...loadIssue16Cases('tuned'),
    ...loadIssue16Cases('advance'),
    ...loadMath500(dataDir),
    ...loadGsm8k(dataDir, 'gsm8k_test.jsonl'),
    ...loadGsm8k(dataDir, 'gsm8k_train.jsonl'),
  ];
  const reports = new Map<string, SetReport>();
  const latencies: number[] = [];
  const mistakes: string[] = [];
  warmUpSymbolic(); // as a pool thread does before its first check
  const started = performance.now();
  for (const c of cases) {
    const t = performance.now();
    const verdict = checkAnswer(c.gold, c.pred, { extraction: c.extraction });
    latencies.push(performance.now() - t);
    const report = reports.get(c.set) ?? { set: c.set, checks: 0, agree: 0, falseAccepts: 0, falseRejects: 0, other: 0 };
    reports.set(c.set, report);
    report.checks++;
    const agrees = c.binary ? (verdict.status === 'correct') === (c.expected === 'correct') : verdict.status === c.expected;
    if (agrees) report.agree++;
    else {
      if (verdict.status === 'correct') report.falseAccepts++;
      else if (c.expected === 'correct') report.falseRejects++;
      else report.other++;
      mistakes.push(
        `${c.set}/${c.category}: expected ${c.expected}, got ${verdict.status} (${verdict.detail}) gold=${JSON.stringify(verdict.gold).slice(0, 80)} pred=${JSON.stringify(verdict.predicted).slice(0, 80)}`,
      );
    }
  }
  const totalMs = performance.now() - started;
  printReports([...reports.values()]);
  const sorted = [...latencies].sort((a, b) => a - b);
  console.log(
    `\nin-thread latency per check: p50 ${percentile(sorted, 0.5).toFixed(3)} ms, p99 ${percentile(sorted, 0.99).toFixed(3)} ms, max ${sorted[sorted.length - 1]?.toFixed(1)} ms`,
  );
  console.log(`throughput: ${((cases.length / totalMs) * 1000).toFixed(0)} checks/s on one core (${cases.length} checks)`);
  await poolThroughput(cases);
  await adversarial();
  await (await import('./verify/code-checks.js')).benchCode();
  if (mistakes.length > 0) console.log(`\ndisagreements (${mistakes.length}):\n${mistakes.slice(0, 60).join('\n')}`);
  return 0;
}

function printReports(reports: readonly SetReport[]): void {
  console.log('set                 checks   agreement  false-accepts  false-rejects  other');
  const total: SetReport = { set: 'all', checks: 0, agree: 0, falseAccepts: 0, falseRejects: 0, other: 0 };
  for (const r of [...reports, total]) {
    if (r !== total) for (const key of ['checks', 'agree', 'falseAccepts', 'falseRejects', 'other'] as const) total[key] += r[key];
    const pct = ((100 * r.agree) / Math.max(1, r.checks)).toFixed(2);
    console.log(
      `${r.set.padEnd(18)} ${String(r.checks).padStart(7)} ${pct.padStart(10)}% ${String(r.falseAccepts).padStart(14)} ${String(r.falseRejects).padStart(14)} ${String(r.other).padStart(6)}`,
    );
  }
}

async function poolThroughput(cases: readonly LabelledCase[]): Promise<void> {
  const size = Math.min(2, availableParallelism());
  const pool = new VerifierPool({ size });
  try {
    await pool.verify('1', '\\boxed{1}');
    const started = performance.now();
    const verdicts = await Promise.all(
      cases.map((c) => pool.verify(typeof c.gold === 'string' ? c.gold : [...c.gold], c.pred, { extraction: c.extraction })),
    );
    const seconds = (performance.now() - started) / 1000;
    const failures = verdicts.filter((v) => v.status === 'timeout' || v.status === 'error').length;
    console.log(
      `pool of ${size} threads: ${(cases.length / seconds).toFixed(0)} checks/s (${(cases.length / seconds / size).toFixed(0)} per core), ${failures} timeouts/errors`,
    );
  } finally {
    await pool.close();
  }
}

async function adversarial(): Promise<void> {
  const budgetMs = 3000;
  const pool = new VerifierPool({ budgetMs });
  try {
    await pool.verify('1', '\\boxed{1}');
    console.log(`\nadversarial inputs (budget ${budgetMs} ms):`);
    let worstOverrun = 0;
    for (const c of adversarialCases()) {
      const started = performance.now();
      const verdict = await pool.verify(c.gold, c.pred);
      const wall = performance.now() - started;
      worstOverrun = Math.max(worstOverrun, wall - budgetMs);
      console.log(`  ${c.name.padEnd(28)} ${verdict.status.padEnd(9)} ${wall.toFixed(1).padStart(8)} ms  ${verdict.detail ?? ''}`.slice(0, 130));
    }
    console.log(`  worst overrun past the budget: ${Math.max(0, worstOverrun).toFixed(1)} ms`);
  } finally {
    await pool.close();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
