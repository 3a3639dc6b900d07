import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { arrowFileBytes, parquetBytes } from '../../src/export/arrow-trajectories.js';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { VLLM_STATE } from '../../src/stack/vllm-server.js';

/** The shipped parity command, as `npm run setup:vllm` installs it with the Python package into the vLLM venv. */
export const RATCHET_PARITY = path.join(VLLM_STATE, 'venv/bin/ratchet-parity');

/** ParityStats.as_dict() (python/ratchet_rollouts/parity.py). */
export interface ParityStats {
  tokens: number;
  mean_abs: number;
  p99_abs: number;
  max_abs: number;
  ratio_mean: number;
  ratio_min: number;
  ratio_max: number;
  ratio_outside: number;
  kl_k3: number;
}

/** `ratchet-parity --json`'s report. */
export interface ParityReport {
  overall: ParityStats | null;
  by_version: Record<string, ParityStats>;
  /** Keyed `temperature=T top_p=P top_k=K min_p=M repetition_penalty=R`. */
  by_sampling: Record<string, ParityStats>;
  raw: ParityStats | null;
  raw_by_sampling: Record<string, ParityStats>;
  rows: number;
  unchecked_tokens: Record<string, number>;
  rows_without_sampling: number;
  outside_support: number;
  failures: string[];
}

export type ExportFormat = 'jsonl' | 'parquet' | 'arrow';

let exported = 0;

/** A scratch folder for export files (the caller removes it). */
export function exportFolder(): Promise<string> {
  return mkdtemp(path.join(os.tmpdir(), 'ratchet-parity-'));
}

/** Writes rows as `ratchet export --format F` does, into a new file in `folder`. */
export async function exportFile(folder: string, rows: readonly ExportedTrajectory[], format: ExportFormat): Promise<string> {
  const file = path.join(folder, `rows-${++exported}.${format}`);
  const bytes =
    format === 'jsonl' ? rows.map((row) => JSON.stringify(row)).join('\n') : format === 'parquet' ? parquetBytes(rows) : arrowFileBytes(rows);
  await writeFile(file, bytes);
  return file;
}

/** Runs `ratchet-parity --json ARGS`; its exit status (1: a bound broken) comes back with the report. */
export async function runParity(args: readonly string[]): Promise<{ code: number; report: ParityReport; stderr: string }> {
  const result = await promisify(execFile)(RATCHET_PARITY, ['--json', ...args], {
    maxBuffer: 1 << 20,
    env: { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
  }).then(
    (done) => ({ ...done, code: 0 }),
    (error: { stdout?: string; stderr?: string; code?: number }) => ({
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? '',
      code: error.code ?? -1,
    }),
  );
  if (!result.stdout.trim()) throw new Error(`ratchet-parity ${args.join(' ')} printed no report (exit ${result.code}):\n${result.stderr}`);
  return { code: result.code, report: JSON.parse(result.stdout) as ParityReport, stderr: result.stderr };
}

/** One line for the test log: the numbers the docs record. */
export function describeParity(label: string, stats: ParityStats | null | undefined, raw: ParityStats | null | undefined): string {
  const line = (s: ParityStats | null | undefined) =>
    s
      ? `|Δ| mean ${s.mean_abs.toExponential(2)}, p99 ${s.p99_abs.toExponential(2)}, max ${s.max_abs.toExponential(2)}, ratio [${s.ratio_min.toFixed(4)}, ${s.ratio_max.toFixed(4)}], k3 ${s.kl_k3.toExponential(2)}`
      : 'none';
  return `${label}, ${stats?.tokens ?? 0} tokens: at the row's sampling ${line(stats)}; raw (contrast) ${line(raw)}`;
}

/** The `by_sampling` key of rows sampled with these options (the seed's values for the others). */
export function samplingLabel(options: { temperature?: number; topP?: number; topK?: number; minP?: number; repetitionPenalty?: number }): string {
  const { temperature = 1, topP = 1, topK = -1, minP = 0, repetitionPenalty = 1 } = options;
  return `temperature=${temperature} top_p=${topP} top_k=${topK} min_p=${minP} repetition_penalty=${repetitionPenalty}`;
}
