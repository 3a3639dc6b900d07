import type { CodeTask } from '../code/index.js';
import { environmentSeed } from '../environments/environment-set.js';
import type { EnvironmentTask, JsonValue } from '../environments/environment.js';
import type { AnswerExtraction } from '../verifier/index.js';

/** The request's fields an environment reads, as the workflow passes them to its steps (the seed is derived here). */
export interface EnvironmentTaskInput {
  trajectoryId: string;
  qid: string;
  problem: string;
  gold: string[];
  code?: CodeTask;
  args?: { [key: string]: JsonValue };
  extraction?: AnswerExtraction;
}

export function environmentTask(input: Partial<EnvironmentTaskInput> & { trajectoryId: string; gold: string[] }): EnvironmentTask {
  return {
    trajectoryId: input.trajectoryId,
    qid: input.qid ?? '',
    problem: input.problem ?? '',
    gold: input.gold,
    seed: environmentSeed(input.trajectoryId),
    ...(input.code ? { code: input.code } : {}),
    ...(input.args ? { args: input.args } : {}),
    ...(input.extraction ? { answerExtraction: input.extraction } : {}),
  };
}
