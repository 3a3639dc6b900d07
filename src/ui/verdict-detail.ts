/** A judge's detail split for display: which test, and expected against actual output or the traceback. */
export interface VerdictDetailParts {
  /** `test 2 of 5`, when the detail names a test. */
  test: string | null;
  expected: string | null;
  actual: string | null;
  /** The rest: a crash with its traceback (stderr's end), a limit hit, a rule that matched. */
  text: string;
}

const TEST = /^(test \d+ of \d+): ([\s\S]*)$/;
// judgeRun's `expected <json>, got <json>` (src/code/judge-run.ts): each side a JSON string, so newlines survive.
const COMPARED = /^expected ("(?:[^"\\]|\\.)*"), got ("(?:[^"\\]|\\.)*")$/;

export function verdictDetailParts(detail: string): VerdictDetailParts {
  const test = TEST.exec(detail);
  const rest = test ? test[2]! : detail;
  const compared = COMPARED.exec(rest);
  if (compared) {
    try {
      return { test: test?.[1] ?? null, expected: JSON.parse(compared[1]!) as string, actual: JSON.parse(compared[2]!) as string, text: '' };
    } catch {
      // Not JSON after all: shown as it is.
    }
  }
  return { test: test?.[1] ?? null, expected: null, actual: null, text: rest };
}
