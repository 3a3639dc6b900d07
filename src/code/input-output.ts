import type { CodeTests } from './types.js';

export type ParsedTests = { ok: true; tests: CodeTests } | { ok: false; message: string };

/**
 * Decodes AReaL's `input_output` (a JSON string, or the object itself) into test cases, or says precisely
 * what is wrong with it: invalid JSON, missing or non-list `inputs`/`outputs`, lists of different lengths,
 * items that are not strings, no test case at all.
 */
export function parseTests(inputOutput: unknown): ParsedTests {
  let value = inputOutput;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      return { ok: false, message: `"input_output" is not valid JSON: ${(error as Error).message}` };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { ok: false, message: '"input_output" must be a JSON object with "inputs" and "outputs"' };
  const { inputs, outputs, fn_name: fnName } = value as Record<string, unknown>;
  for (const [name, list] of [
    ['inputs', inputs],
    ['outputs', outputs],
  ] as const) {
    if (!Array.isArray(list)) return { ok: false, message: `"input_output.${name}" must be a list, got ${describe(list)}` };
    const bad = list.findIndex((item) => typeof item !== 'string');
    if (bad >= 0) return { ok: false, message: `"input_output.${name}[${bad}]" must be a string, got ${describe(list[bad])}` };
  }
  const ins = inputs as string[];
  const outs = outputs as string[];
  if (ins.length !== outs.length) return { ok: false, message: `"input_output" has ${ins.length} inputs but ${outs.length} outputs` };
  if (ins.length === 0) return { ok: false, message: '"input_output" has no test cases' };
  if (fnName !== undefined && fnName !== null && typeof fnName !== 'string')
    return { ok: false, message: `"input_output.fn_name" must be a string, got ${describe(fnName)}` };
  if (typeof fnName === 'string' && fnName !== '' && !/^[A-Za-z_]\w*$/.test(fnName))
    return { ok: false, message: `"input_output.fn_name" ${JSON.stringify(fnName)} is not a Python identifier` };
  return { ok: true, tests: { inputs: ins, outputs: outs, fnName: fnName ?? '' } };
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  return Array.isArray(value) ? 'a list' : typeof value;
}
