import type { RunConfig } from '../../src/admission/group-membership.js';
import type { RolloutClient, SubmitOptions } from '../../src/client/rollout-client.js';
import type { Problem } from '../../src/datasets/index.js';

/** One group to submit: a problem, and a tag when the dataset is gone through more than once. */
export interface PlannedGroup {
  problem: Problem;
  tag?: string;
}

/** `groups` groups from the dataset in order, repeating it under tags `e1`, `e2`… (another epoch) when too short. */
export function planGroups(problems: readonly Problem[], groups: number): PlannedGroup[] {
  if (problems.length === 0) throw new Error('no problems to submit');
  return Array.from({ length: groups }, (_, i) => {
    const epoch = Math.floor(i / problems.length);
    return { problem: problems[i % problems.length]!, ...(epoch > 0 ? { tag: `e${epoch}` } : {}) };
  });
}

/**
 * Submits every group up front, `concurrency` trajectory starts in flight at a time (a group starts its
 * members in parallel, so groups are submitted concurrency / samples at a time). Returns the trajectory ids
 * and how many submissions came back as duplicates (none, on a fresh run).
 */
export async function submitAll(
  client: RolloutClient,
  run: RunConfig,
  planned: readonly PlannedGroup[],
  options: SubmitOptions,
  concurrency: number,
  onProgress: (submittedGroups: number) => void,
): Promise<{ trajectoryIds: string[]; duplicates: number }> {
  const trajectoryIds: string[] = [];
  let duplicates = 0;
  let next = 0;
  const submitter = async () => {
    while (next < planned.length) {
      const { problem, tag } = planned[next++]!;
      const [group] = await client.submit(run, [problem], { ...options, ...(tag ? { tag } : {}) });
      trajectoryIds.push(...group!.trajectoryIds);
      if (group!.duplicate) duplicates++;
      onProgress(trajectoryIds.length / options.samples);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.floor(concurrency / options.samples)) }, submitter));
  return { trajectoryIds, duplicates };
}
