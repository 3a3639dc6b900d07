import { codeTaskSchema } from '../code/code-task-schema.js';
import { MAX_REQUEST_JSON_BYTES, trajectoryRequestSchema } from '../trajectory/request.js';
import { problemLines, readableIssue } from '../trajectory/schema-problems.js';
import { jsonBytesOver } from '../trajectory/utf8-length.js';
import type { Problem } from './problem.js';

// A row must load into any run: the probe request carries the longest run name (a run id is at most 200
// bytes) and the last sample of the largest group (4096), and leaves room for what a submission adds to the
// row's own fields (a group is about 1 KB at its longest; options and timeouts a few hundred bytes).
const LONGEST_RUN_NAME = 'r'.repeat(200);
const LAST_SAMPLE = 4095;
const SUBMISSION_BYTES = 4096;

/**
 * Why a trajectory request made from this row would be rejected (a NUL that Postgres cannot store, a qid too
 * long for a workflow id, a request over Temporal's payload limit), or undefined when it would be accepted.
 * The request schema is the judge, so a row that loads is a row that can run.
 */
export function rowRequestProblem(problem: Problem): string | undefined {
  const probe = {
    trajectoryId: `${LONGEST_RUN_NAME}/${problem.qid}/${LAST_SAMPLE}`,
    qid: problem.qid,
    ...(problem.taskId === undefined ? {} : { taskId: problem.taskId }),
    problem: problem.problem,
    // A code task is judged by its tests, which the request will carry instead of reference solutions.
    gold: problem.code ? ['(judged by the tests)'] : problem.gold,
    ...(problem.environment === undefined ? {} : { environment: problem.environment }),
    ...(problem.environmentArgs === undefined ? {} : { environmentArgs: problem.environmentArgs }),
  };
  const bytes = jsonBytesOver(problem.code ? { ...probe, code: problem.code } : probe, MAX_REQUEST_JSON_BYTES - SUBMISSION_BYTES);
  if (bytes !== undefined) {
    return `too large: its trajectory request would be about ${bytes + SUBMISSION_BYTES} bytes as JSON, over the ${MAX_REQUEST_JSON_BYTES}-byte limit (Temporal rejects payloads over 2 MiB)`;
  }
  if (problem.code) {
    const code = codeTaskSchema.safeParse(problem.code, { error: readableIssue });
    if (!code.success) return `not a valid trajectory request: ${problemLines(code.error.issues, 'code').join('; ')}`;
  }
  const parsed = trajectoryRequestSchema.safeParse(probe, { error: readableIssue });
  if (parsed.success) return undefined;
  // The probe's trajectory id is ours; what can be wrong with it (length, control characters) is the qid's
  // fault and is reported on the qid, as a qid within its limit always makes an id within Temporal's.
  const ours = parsed.error.issues.filter((issue) => issue.path[0] !== 'trajectoryId');
  const issues = ours.length > 0 ? ours : parsed.error.issues;
  return `not a valid trajectory request: ${problemLines(issues, 'request').join('; ')}`;
}
