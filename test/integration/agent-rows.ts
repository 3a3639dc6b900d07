import { expect } from 'vitest';
import type { ExportedTrajectory } from '../../src/store/read/trajectory-export.js';
import { agentWorkflowId } from '../../src/workflows/agent-workflow-runs.js';
import type { TestStack } from './local-stack.js';

/** Each turn as the policy served it: one generate request per turn (none twice), its input the stored context. */
export function expectServedOnce(stack: TestStack, row: ExportedTrajectory): void {
  const served = stack.policy.stats().recent.filter((r) => r.rid.startsWith(`${row.trajectory_id}/`) && r.end !== 'disconnect');
  expect(served).toHaveLength(row.seqlens.length);
  let offset = 0;
  let logprobOffset = 0;
  row.seqlens.forEach((length, t) => {
    const sequence = row.packed_input_ids.slice(offset, offset + length);
    const contextLen = row.prompt_lens[t]!;
    // The trainer's view of turn t: the context the server was given, the tokens it sent and their logprobs.
    expect(served[t]!.inputIds).toEqual(sequence.slice(0, contextLen));
    expect(served[t]!.sentIds).toEqual(sequence.slice(contextLen));
    expect(served[t]!.sentLogprobs.map(Math.fround)).toEqual(row.packed_logprobs.slice(logprobOffset + contextLen - 1, logprobOffset + length - 1));
    offset += length;
    logprobOffset += length - 1;
  });
}

/** How each run of a trajectory's agent workflow ended (its child workflows' statuses, in order). */
export async function agentWorkflowRunStatuses(stack: TestStack, trajectoryId: string): Promise<string[]> {
  const statuses: string[] = [];
  for (let attempt = 1; ; attempt += 1) {
    const handle = stack.client.workflow.getHandle(agentWorkflowId(trajectoryId, attempt));
    const status = await handle.describe().then(
      (described) => described.status.name,
      () => undefined,
    );
    if (status === undefined) return statuses;
    statuses.push(status);
  }
}
