import { InvalidArgumentError, type Command } from 'commander';
import { loadDataset, type Problem } from '../datasets/index.js';
import type { JsonValue } from '../environments/environment.js';
import type { RolloutOptions } from '../trajectory/options.js';
import { describeRowErrors } from './dataset-report.js';

export function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError(`expected a positive integer, got "${value}"`);
  return n;
}

export function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`expected a non-negative integer, got "${value}"`);
  return n;
}

export function finiteNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n)) throw new InvalidArgumentError(`expected a number, got "${value}"`);
  return n;
}

/** Adds the rollout options every submitting command shares. */
export function withRolloutOptions(command: Command): Command {
  return command
    .option('--turns <n>', 'turns per trajectory (seed: 5)', positiveInt)
    .option('--early-stop', 'stop a trajectory at its first correct turn')
    .option('--discount <gamma>', 'turn-level discount γ in (0, 1]', finiteNumber)
    .option('--reward-scaling <x>', 'reward scaling', finiteNumber)
    .option('--reward-bias <x>', 'reward bias', finiteNumber)
    .option('--max-new-tokens <n>', 'per-turn token budget (default 1024)', positiveInt)
    .option('--layout <layout>', 'packing: seed (one sequence per turn) or concat (AReaL-lite)')
    .option('--answer-extraction <mode>', 'what the verifier takes as the answer: stated (default) or math-verify');
}

export function rolloutOptionsFrom(flags: Record<string, unknown>): Partial<RolloutOptions> {
  return {
    turns: flags.turns as number | undefined,
    earlyStop: flags.earlyStop as boolean | undefined,
    discount: flags.discount as number | undefined,
    rewardScaling: flags.rewardScaling as number | undefined,
    rewardBias: flags.rewardBias as number | undefined,
    maxNewTokens: flags.maxNewTokens as number | undefined,
    layout: flags.layout as RolloutOptions['layout'] | undefined,
    answerExtraction: flags.answerExtraction as RolloutOptions['answerExtraction'] | undefined,
  };
}

/** Adds the options that set every row's environment (`--environment`, `--environment-args`). */
export function withEnvironmentOptions(command: Command): Command {
  return command
    .option(
      '--environment <name>',
      'run every row in this environment (math, code, math-python-tool, or one served by `ratchet-env serve`), whatever its own `environment` says',
    )
    .option(
      '--environment-args <json>',
      "the environment's arguments for every row, a JSON object (default: each row's `environment_args`)",
      jsonObject,
    );
}

export function jsonObject(value: string): { [key: string]: JsonValue } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`expected a JSON object, got "${value}" (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw new InvalidArgumentError(`expected a JSON object, got "${value}"`);
  return parsed as { [key: string]: JsonValue };
}

/** The problems with `--environment` and `--environment-args` applied (each replaces the row's own). */
export function withEnvironment(problems: Problem[], flags: { environment?: unknown; environmentArgs?: unknown }): Problem[] {
  const environment = flags.environment as string | undefined;
  const args = flags.environmentArgs as { [key: string]: JsonValue } | undefined;
  if (environment === undefined && args === undefined) return problems;
  return problems.map((problem) => ({
    ...problem,
    ...(environment === undefined ? {} : { environment }),
    ...(args === undefined ? {} : { environmentArgs: args }),
  }));
}

/** Loads a dataset, reporting malformed rows on stderr (the first few by file:line, then a count); the other rows run. */
export async function loadProblems(file: string, limit?: number): Promise<Problem[]> {
  const { problems, errors } = await loadDataset(file, { limit });
  for (const line of describeRowErrors(file, errors)) process.stderr.write(`${line}\n`);
  if (problems.length === 0) throw new Error(`${file}: no usable rows${errors.length ? ` (${errors.length} malformed)` : ''}`);
  return problems;
}
