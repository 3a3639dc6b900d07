import { z } from 'zod';
import { groupMembershipSchema } from '../admission/group-membership.js';
import { codeTaskSchema } from '../code/code-task-schema.js';
import { InvalidTrajectoryRequest } from './invalid-trajectory-request.js';
import { rolloutOptionsSchema } from './options.js';
import { problemLines, readableIssue } from './schema-problems.js';
import { trajectoryTimeoutsSchema } from './timeouts.js';
import { jsonBytesOver, utf8Length } from './utf8-length.js';
export { InvalidTrajectoryRequest } from './invalid-trajectory-request.js';
/** Temporal's default limit on a workflow id, which is the trajectory id. */
export const MAX_TRAJECTORY_ID_BYTES = 1000;
export const MAX_QID_BYTES = 400;
/** Temporal rejects a payload over 2 MiB; 1 KiB of it is left for the payload's metadata and framing. */
export const MAX_REQUEST_JSON_BYTES = 2 * 1024 * 1024 - 1024;
// Ids show up in Temporal UI, logs, file names and SQL; a control character there is a corrupt row, not an id.
const NO_CONTROL_CHARACTERS = /^[^\u0000-\u001F\u007F-\u009F]*$/;
// Postgres text cannot store U+0000: a request carrying one could never be recorded.
const NO_NUL = /^[^\u0000]*$/;
const identifier = (maxBytes, why, description) => {
    const byteLimit = {
        error: (issue) => `must be at most ${maxBytes} UTF-8 bytes (${why}), got ${utf8Length(String(issue.input))}`,
    };
    return z
        .string()
        .min(1, 'must not be empty')
        .max(maxBytes, byteLimit)
        .regex(NO_CONTROL_CHARACTERS, 'must not contain control characters (U+0000–U+001F, U+007F–U+009F)')
        .refine((value) => utf8Length(value) <= maxBytes, byteLimit)
        .meta({ description: `${description} At most ${maxBytes} UTF-8 bytes (${why}).` });
};
// An environment's name is part of a task queue's name.
const ENVIRONMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const text = z.string().regex(NO_NUL, 'must not contain NUL (U+0000), which Postgres text cannot store');
const requestFields = z.strictObject({
    trajectoryId: identifier(MAX_TRAJECTORY_ID_BYTES, "Temporal's workflow id limit", 'Also the workflow id; with a `group`, it must be `<groupId>/<sample>`.'),
    qid: identifier(MAX_QID_BYTES, 'so that `<run>/<qid>/<sample>` fits a workflow id', "The problem's id (exported, and a search attribute)."),
    taskId: z.number().int().optional().meta({ description: 'Exported as `task_id`.' }),
    problem: text.min(1, 'must not be empty').meta({ description: 'The problem text; the chat template renders it with the math instruction.' }),
    gold: z.array(text).meta({ description: 'Gold answers as the dataset has them; any match counts. At least one, unless `code` judges the answer.' }),
    code: codeTaskSchema.optional().meta({
        description: "Makes this a code task: the answer's last Python block is run against these tests in a sandbox; `gold` then holds reference solutions, possibly none.",
    }),
    environment: z
        .string()
        .regex(ENVIRONMENT_NAME, 'must be 1-64 letters, digits, `.`, `_` or `-`, starting with a letter or digit')
        .optional()
        .meta({
        description: 'The environment the episode runs in: `math`, `code`, `math-python-tool`, or one served on its own task queue `ratchet-env-<name>` ' +
            "(Python's `ratchet-env serve`). Default: `code` for a code task, `math` otherwise.",
    }),
    environmentArgs: z
        .record(z.string(), z.json())
        .optional()
        .meta({ description: "What the environment needs beyond the problem (a game's settings, a tool list): passed to its reset and steps." }),
    options: rolloutOptionsSchema.partial().optional().meta({ description: 'Rollout options, each optional.' }),
    group: groupMembershipSchema.optional().meta({
        description: "Makes the trajectory a member of a group in a training run: it waits for admission under the run's staleness bound and is consumed with its group.",
    }),
    timeouts: trajectoryTimeoutsSchema.optional().meta({ description: 'Overrides for activity timeouts and the admission re-check, each optional.' }),
});
/**
 * The whole trajectory request, the workflow's one argument. Shared by the workflow, the TypeScript client,
 * the CLI and (as python/ratchet_rollouts/trajectory-request.schema.json) every other language. Unknown keys are rejected, so
 * a misspelt option fails instead of silently taking its default.
 */
export const trajectoryRequestSchema = requestFields
    .superRefine((request, context) => {
    const judgedByGold = request.environment === undefined || request.environment === 'math' || request.environment === 'math-python-tool';
    if (!request.code && judgedByGold && request.gold.length === 0)
        context.addIssue({ code: 'custom', path: ['gold'], message: 'must hold at least one gold answer' });
    if (request.environment === 'code' && !request.code)
        context.addIssue({ code: 'custom', path: ['code'], message: 'is required by the `code` environment (the tests its answers run against)' });
    if (request.group && request.trajectoryId !== `${request.group.groupId}/${request.group.sample}`) {
        context.addIssue({
            code: 'custom',
            path: ['trajectoryId'],
            message: `must be "<groupId>/<sample>" (${request.group.groupId}/${request.group.sample})`,
        });
    }
    const bytes = jsonBytesOver(request, MAX_REQUEST_JSON_BYTES);
    if (bytes !== undefined) {
        context.addIssue({
            code: 'custom',
            path: [],
            message: `is ${bytes} bytes as JSON, over the ${MAX_REQUEST_JSON_BYTES}-byte limit (Temporal rejects payloads over 2 MiB); keep long texts out of the request`,
        });
    }
})
    .meta({
    title: 'TrajectoryRequest',
    description: 'The one argument of the `trajectory` workflow: one sample of one problem. As JSON it must stay under ' +
        `${MAX_REQUEST_JSON_BYTES} bytes (Temporal rejects payloads over 2 MiB).`,
});
/** Checks a request against the schema and returns it; throws `InvalidTrajectoryRequest` listing every problem. */
export function validateTrajectoryRequest(input) {
    const parsed = trajectoryRequestSchema.safeParse(input, { error: readableIssue });
    if (parsed.success)
        return parsed.data;
    const id = input?.trajectoryId;
    throw new InvalidTrajectoryRequest(problemLines(parsed.error.issues, 'request'), typeof id === 'string' ? id : undefined);
}
//# sourceMappingURL=request.js.map