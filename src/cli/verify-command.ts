import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { Command, Option } from 'commander';
import { type AnswerExtraction, VerifierPool } from '../verifier/index.js';
import { CodeSandboxPool } from '../code/index.js';
import { positiveInt } from './shared-options.js';
import { verifyCodeLine } from './verify-code-line.js';

/** Checks in flight at once; answers are still written in input order. */
const WINDOW = 256;

/** `ratchet verify`: JSON lines `{"gold", "pred"}` on stdin, one verdict line each on stdout. */
export function verifyCommand(): Command {
  return new Command('verify')
    .description('check answers: reads {"gold": ..., "pred": ...} JSON lines on stdin, writes one verdict line each')
    .option('--budget-ms <ms>', 'wall-clock budget per check', positiveInt, 3000)
    .addOption(
      new Option(
        '--extraction <mode>',
        'where the answer is found: "stated" (box, answer statement or a bare answer) or "math-verify" (also the last math span or number of any text)',
      )
        .choices(['stated', 'math-verify'])
        .default('stated'),
    )
    .action(async (flags: { budgetMs: number; extraction: AnswerExtraction }) => {
      const { lines, invalid } = await runVerifyCommand(process.stdin, process.stdout, { budgetMs: flags.budgetMs, extraction: flags.extraction });
      process.stderr.write(`verified ${lines - invalid} lines${invalid > 0 ? `, ${invalid} invalid` : ''}\n`);
    });
}

/**
 * Verifies each input line in a {@link VerifierPool} and writes, in input order, one JSON line
 * with `line`, `equal`, `status`, `predicted`, `gold`, `detail` and `elapsedMs`. A line that is
 * not `{"gold": string | string[], "pred": string}` gets status `error` and its line number.
 * Wrong answers are results, not failures: the caller exits 0.
 */
export async function runVerifyCommand(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  options: { budgetMs?: number; extraction?: AnswerExtraction },
): Promise<{ lines: number; invalid: number }> {
  const pool = new VerifierPool({ budgetMs: options.budgetMs, extraction: options.extraction });
  // Made at the first code line: a file of math lines never probes for an isolation tool.
  let sandbox: CodeSandboxPool | undefined;
  const pending: Array<Promise<string>> = [];
  let lines = 0;
  let invalid = 0;
  const flush = async (keep: number): Promise<void> => {
    while (pending.length > keep) {
      const text = await pending.shift()!;
      if (!output.write(`${text}\n`)) await once(output, 'drain');
    }
  };
  try {
    let lineNumber = 0;
    for await (const text of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
      lineNumber += 1;
      if (text.trim() === '') continue;
      lines += 1;
      const line = lineNumber;
      const codeVerdict = verifyCodeLine(text, () => (sandbox ??= new CodeSandboxPool()));
      if (codeVerdict) {
        pending.push(codeVerdict.then((verdict) => JSON.stringify({ line, ...verdict })));
        await flush(WINDOW);
        continue;
      }
      const parsed = parseInputLine(text);
      if (typeof parsed === 'string') {
        invalid += 1;
        const verdict = { line, equal: false, status: 'error', predicted: null, gold: [], detail: `invalid input on line ${line}: ${parsed}` };
        pending.push(Promise.resolve(JSON.stringify(verdict)));
      } else {
        pending.push(pool.verify(parsed.gold, parsed.pred).then((verdict) => JSON.stringify({ line, ...verdict })));
      }
      await flush(WINDOW);
    }
    await flush(0);
  } finally {
    await pool.close();
  }
  return { lines, invalid };
}

/** The checked pair, or why the line is not one. */
function parseInputLine(text: string): { gold: string | string[]; pred: string } | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${error instanceof Error ? error.message : String(error)})`;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'expected a JSON object';
  const { gold, pred } = value as { gold?: unknown; pred?: unknown };
  const goldOk = typeof gold === 'string' || (Array.isArray(gold) && gold.length > 0 && gold.every((g) => typeof g === 'string'));
  if (!goldOk) return '"gold" must be a string or a non-empty array of strings';
  if (typeof pred !== 'string') return '"pred" must be a string';
  return { gold: gold as string | string[], pred };
}
