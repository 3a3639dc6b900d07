import type pg from 'pg';
import { persistFailureActivity, persistTrajectoryActivity } from '../../src/activities/persist.js';
import type { RunConfig } from '../../src/admission/group-membership.js';
import { joinGroup } from '../../src/store/write/rollout-groups.js';
import { saveFeedback, savePrompt, saveTurnOutput, saveVerdict } from '../../src/store/write/turn-store.js';
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
    await saveTurnOutput(pool, {
      trajectoryId,
      turn,
      attempt: 1,
      contextLen: context,
      outputIds: [3, 3, 3],
      outputLogprobs: [-1, -1, -1],
      outputVersions: [version, version, version],
      finishReason: 'stop',
      versionStart: version,
      versionEnd: version,
    });
    await saveVerdict(pool, trajectoryId, turn, { answerText: '4', extracted: '4', status: verdict });
    await saveFeedback(pool, trajectoryId, turn, [4], verdict === 'correct' ? 'Correct.' : 'Try again.');
    turns.push({
      turn,
      contextLen: context,
      outputLen: 3,
      finishReason: 'stop' as const,
      versionStart: version,
      versionEnd: version,
      verdict,
      success: verdict === 'correct',
      feedbackLen: 1,
    });
    context += 4;
  }
  const rewards = turns.map((t) => (t.success ? 1 : -1));
  await persistTrajectoryActivity(pool)({
    trajectoryId,
    qid: trajectoryId.split('/')[1]!,
    birthTime: Date.now() - 5_000,
    layout: 'seed',
    turns,
    rewards,
    rawRewards: rewards,
  });
}

export async function fail(
  pool: pg.Pool,
  trajectoryId: string,
  failureType = 'PolicyUnavailable',
  failureClass: FailureClass = 'infrastructure',
): Promise<void> {
  await persistFailureActivity(pool)({
    trajectoryId,
    qid: trajectoryId.split('/')[1]!,
    birthTime: Date.now() - 5_000,
    layout: 'seed',
    turnsDone: 0,
    error: `${failureType}: test`,
    failureType,
    failureClass,
  });
}

/** One turn's generation as a GPU worker stores it (issue 27): the server that generated it and what it reported cached. */
export interface ServedTurn {
  servedBy?: string;
  cachedTokens?: number;
  /** An earlier attempt on another server, replaced by this one (a retry, or a turn that fell back to the shared queue). */
  replaces?: { servedBy?: string; cachedTokens?: number };
}

/**
 * As `complete`, with each turn generated on a server: contexts are 2, 6, 10, ... tokens (a 2-token prompt, then 3
 * output and 1 feedback token per turn), every verdict `wrong` but the last.
 */
export async function completeOnServers(pool: pg.Pool, trajectoryId: string, served: ServedTurn[]): Promise<void> {
  await start(pool, trajectoryId);
  const turns = [];
  for (const [turn, server] of served.entries()) {
    const contextLen = 2 + 4 * turn;
    const verdict = turn === served.length - 1 ? ('correct' as const) : ('wrong' as const);
    const output = {
      trajectoryId,
      turn,
      contextLen,
      outputIds: [3, 3, 3],
      outputLogprobs: [-1, -1, -1],
      outputVersions: [0, 0, 0],
      finishReason: 'stop' as const,
      versionStart: 0,
      versionEnd: 0,
    };
    if (server.replaces) await saveTurnOutput(pool, { ...output, attempt: 1, ...server.replaces });
    await saveTurnOutput(pool, { ...output, attempt: server.replaces ? 2 : 1, servedBy: server.servedBy, cachedTokens: server.cachedTokens });
    await saveVerdict(pool, trajectoryId, turn, { answerText: '4', extracted: '4', status: verdict });
    await saveFeedback(pool, trajectoryId, turn, [4], 'Try again.');
    turns.push({
      turn,
      contextLen,
      outputLen: 3,
      finishReason: 'stop' as const,
      versionStart: 0,
      versionEnd: 0,
      verdict,
      success: verdict === 'correct',
      feedbackLen: 1,
    });
  }
  const rewards = turns.map((t) => (t.success ? 1 : -1));
  await persistTrajectoryActivity(pool)({
    trajectoryId,
    qid: trajectoryId.split('/')[1]!,
    birthTime: Date.now() - 5_000,
    layout: 'seed',
    turns,
    rewards,
    rawRewards: rewards,
  });
}

/**
 * Run `affinity` (issue 27), crafted: q1 turns on A, A, B (B's turn retried from A; B reports no cached tokens), q2
 * on A, A (the second turn's cached count over its context: capped), q3 stored before servers were kept, q4's first
 * turn on an unknown server. Run `solo`: one turn. Expected: later turns 3 (q1's two, q2's one; q4's has no known
 * previous server), 2 on their previous server; cached 0 + 3 + 6 of contexts 2 + 6 + 6 over all turns (9/14), 3 + 6
 * of 6 + 6 over later turns (9/12).
 */
export async function storeAffinityRuns(pool: pg.Pool): Promise<void> {
  await completeOnServers(pool, 'affinity/q1/0', [
    { servedBy: 'ratchet-gpu@A', cachedTokens: 0 },
    { servedBy: 'ratchet-gpu@A', cachedTokens: 3 },
    { servedBy: 'ratchet-gpu@B', replaces: { servedBy: 'ratchet-gpu@A', cachedTokens: 9 } },
  ]);
  await completeOnServers(pool, 'affinity/q2/0', [{ servedBy: 'ratchet-gpu@A' }, { servedBy: 'ratchet-gpu@A', cachedTokens: 12 }]);
  await completeOnServers(pool, 'affinity/q3/0', [{}, {}]);
  await completeOnServers(pool, 'affinity/q4/0', [{}, { servedBy: 'ratchet-gpu@A' }]);
  await completeOnServers(pool, 'solo/q1/0', [{ servedBy: 'http://127.0.0.1:30000', cachedTokens: 1 }]);
}
