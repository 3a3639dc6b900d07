import type pg from 'pg';
import { persistFailureActivity, persistTrajectoryActivity } from '../../src/activities/persist.js';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { joinGroup } from '../../src/store/rollout-groups.js';
import { saveFeedback, savePrompt, saveTurnOutput, saveVerdict } from '../../src/store/turn-store.js';
import type { FailureClass } from '../../src/trajectory/failure.js';
import type { StoredVerdict } from '../../src/trajectory/turn-verdicts.js';

/** Rows of a run written as the activities write them, for the tests of a run's counters. */

/** Registers every member of a group, as its trajectories do when they start; their ids. */
export async function joinedGroup(pool: pg.Pool, run: RunConfig, name: string, size: number): Promise<string[]> {
  const groupId = `${run.runId}/${name}`;
  const ids = Array.from({ length: size }, (_, sample) => `${groupId}/${sample}`);
  for (const [sample, id] of ids.entries()) await joinGroup(pool, id, name, { run, groupId, size, sample });
  return ids;
}

/** A trajectory that has tokenized its prompt and is generating: working rows only. */
export async function start(pool: pg.Pool, trajectoryId: string): Promise<void> {
  await savePrompt(pool, trajectoryId, [1, 2], 'prompt');
}

/** Runs one trajectory to its stored row: one turn per verdict, `outputLen` tokens each, under policy version `version`. */
export async function complete(pool: pg.Pool, trajectoryId: string, verdicts: StoredVerdict[] = ['correct'], version = 0): Promise<void> {
  await start(pool, trajectoryId);
  let context = 2;
  const turns = [];
  for (const [turn, verdict] of verdicts.entries()) {
    await saveTurnOutput(pool, { trajectoryId, turn, attempt: 1, contextLen: context, outputIds: [3, 3, 3], outputLogprobs: [-1, -1, -1], outputVersions: [version, version, version], finishReason: 'stop', versionStart: version, versionEnd: version });
    await saveVerdict(pool, trajectoryId, turn, { answerText: '4', extracted: '4', status: verdict });
    await saveFeedback(pool, trajectoryId, turn, [4], verdict === 'correct' ? 'Correct.' : 'Try again.');
    turns.push({ turn, contextLen: context, outputLen: 3, finishReason: 'stop' as const, versionStart: version, versionEnd: version, verdict, success: verdict === 'correct', feedbackLen: 1 });
    context += 4;
  }
  const rewards = turns.map((t) => (t.success ? 1 : -1));
  await persistTrajectoryActivity(pool)({ trajectoryId, qid: trajectoryId.split('/')[1]!, birthTime: Date.now() - 5_000, layout: 'seed', turns, rewards, rawRewards: rewards });
}

export async function fail(pool: pg.Pool, trajectoryId: string, failureType = 'PolicyUnavailable', failureClass: FailureClass = 'infrastructure'): Promise<void> {
  await persistFailureActivity(pool)({ trajectoryId, qid: trajectoryId.split('/')[1]!, birthTime: Date.now() - 5_000, layout: 'seed', turnsDone: 0, error: `${failureType}: test`, failureType, failureClass });
}
