import type pg from 'pg';
import type { ModelTokenizer } from '../tokens/model-tokenizer.js';
import { loadTrajectoryView, type TrajectoryView } from '../store/read/trajectory-view.js';
import { recordedDisagreements, type RecordedDisagreement } from '../store/write/status-disagreements.js';
import { statusAgreement, type StatusAgreement } from '../trajectory/status-agreement.js';
import type { TrajectoryState } from '../workflows/trajectory-state.js';
import { splitReasoning, type AnswerParts } from './answer-parts.js';
import {
  describeWorkflow,
  loadWorkflowProblem,
  queryTrajectoryState,
  temporalLink,
  type TemporalAccess,
  type WorkflowDescription,
  type WorkflowProblem,
} from './workflow-lookup.js';

/** Everything the trajectory page and `ratchet show` print: Postgres's view, decoded, plus what Temporal adds. */
export interface TrajectoryDetails {
  view: TrajectoryView;
  problem: WorkflowProblem | null;
  /** The rendered prompt (chat template applied), decoded from its tokens. */
  promptText: string;
  answers: AnswerParts[];
  /** The turn being generated, decoded from its checkpoint. */
  generatingText: string | null;
  live: TrajectoryState | null;
  temporalUrl: string | null;
  /** The workflow's status as Temporal reports it (see describeWorkflow), beside the row's. */
  temporalStatus: string;
  /** Temporal's description: run id, times, pending activities and their attempts. */
  workflow: WorkflowDescription;
  /** The row's status against Temporal's, compared now. */
  agreement: StatusAgreement;
  /** Disagreements the admission controller's sweep recorded for this trajectory. */
  recordedDisagreements: RecordedDisagreement[];
}

export async function loadTrajectoryDetails(
  pool: pg.Pool,
  tokenizer: ModelTokenizer,
  temporal: TemporalAccess | undefined,
  trajectoryId: string,
): Promise<TrajectoryDetails> {
  const view = await loadTrajectoryView(pool, trajectoryId);
  const final = view.status === 'completed' || view.status === 'failed';
  const [problem, live, workflow, recorded] = await Promise.all([
    loadWorkflowProblem(temporal, trajectoryId),
    final ? Promise.resolve(null) : queryTrajectoryState(temporal, trajectoryId),
    describeWorkflow(temporal, trajectoryId),
    recordedDisagreements(pool, trajectoryId),
  ]);
  // A trajectory still running has no stored row: its qid comes from its group or its workflow's input.
  if (view.qid === null && problem?.qid) view.qid = problem.qid;
  // Nor its environment: the row names it once stored; until then (and for rows from before environments) the request does.
  if (view.environment === null && problem) view.environment = problem.environment;
  return {
    view,
    problem,
    live,
    promptText: view.promptText ?? (view.promptIds.length > 0 ? tokenizer.decodeAll(view.promptIds) : ''),
    // The stored answer text is what the verifier judged; without it (a failed turn) decode the tokens.
    answers: view.turns.map((turn) => splitReasoning(turn.answerText ?? (turn.outputIds.length > 0 ? tokenizer.decodeText(turn.outputIds) : ''))),
    // The tokenizer refuses an empty id list: a checkpoint may not have its first piece yet.
    generatingText: view.generating ? (view.generating.ids.length > 0 ? tokenizer.decodeText(view.generating.ids) : '') : null,
    temporalUrl: temporalLink(temporal, trajectoryId),
    temporalStatus: workflow.status,
    workflow,
    agreement: statusAgreement(view.status === 'completed' || view.status === 'failed' ? view.status : null, workflow.status),
    recordedDisagreements: recorded,
  };
}

/** Changes whenever the page would show something new: the client reloads on a new stamp. */
export function trajectoryStamp(view: TrajectoryView): string {
  return [view.status, view.turns.length, view.turns.filter((t) => t.verdict !== null).length, view.generating?.ids.length ?? 0].join(':');
}
