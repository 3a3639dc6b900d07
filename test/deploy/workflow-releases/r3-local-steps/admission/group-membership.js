import { z } from 'zod';
const runIdentifier = z.string().min(1).max(200).regex(/^[A-Za-z0-9._:@-]+$/, 'letters, digits and . _ : @ - only');
/** A run and its staleness bound, carried by every request so any client (TypeScript, Python, CLI) is self-contained. */
export const runConfigSchema = z.strictObject({
    runId: runIdentifier,
    maxHeadOffpolicyness: z.number().int().min(0),
    batchSize: z.number().int().min(1),
    maxConcurrent: z.number().int().min(1),
});
/** Which group a trajectory belongs to. A request with it waits for admission before it generates. */
export const groupMembershipSchema = z.strictObject({
    run: runConfigSchema,
    groupId: z.string().min(1).max(400),
    size: z.number().int().min(1).max(4096),
    sample: z.number().int().min(0),
}).refine((group) => group.sample < group.size, { message: 'sample must be below size', path: ['sample'] })
    .refine((group) => group.groupId.startsWith(`${group.run.runId}/`), { message: 'groupId must start with "<runId>/"', path: ['groupId'] });
/** The group id of a prompt in a run; `tag` tells apart a prompt submitted again (another epoch, say). */
export function groupId(runId, qid, tag) {
    return tag ? `${runId}/${qid}@${tag}` : `${runId}/${qid}`;
}
