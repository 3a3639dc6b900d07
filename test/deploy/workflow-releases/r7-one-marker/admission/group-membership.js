import { z } from 'zod';
const runIdentifier = z
    .string()
    .min(1)
    .max(200)
    .regex(/^[A-Za-z0-9._:@-]+$/, 'letters, digits and . _ : @ - only');
/** A run and its staleness bound, carried by every request so any client (TypeScript, Python, CLI) is self-contained. */
export const runConfigSchema = z.strictObject({
    runId: runIdentifier,
    maxHeadOffpolicyness: z.number().int().min(0),
    batchSize: z.number().int().min(1),
    maxConcurrent: z.number().int().min(1),
});
/** Which group a trajectory belongs to. A request with it waits for admission before it generates. */
export const groupMembershipSchema = z
    .strictObject({
    run: runConfigSchema,
    groupId: z.string().min(1).max(400),
    size: z.number().int().min(1).max(4096),
    sample: z.number().int().min(0),
})
    .refine((group) => group.sample < group.size, { message: 'sample must be below size', path: ['sample'] })
    .refine((group) => group.groupId.startsWith(`${group.run.runId}/`), { message: 'groupId must start with "<runId>/"', path: ['groupId'] });
/**
 * A trajectory's group section, checked: the schema, and the rule that a member's id is `<groupId>/<sample>` (so a
 * group never holds more members than its size). When it fails, `invalid` says why, each problem as `path: message`.
 */
export function parseMembership(trajectoryId, group) {
    const parsed = groupMembershipSchema.safeParse(group);
    if (!parsed.success) {
        const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'group'}: ${issue.message}`).join('; ');
        return { invalid: `trajectory ${trajectoryId} has an invalid group: ${problems}` };
    }
    if (trajectoryId !== `${parsed.data.groupId}/${parsed.data.sample}`) {
        return { invalid: `trajectory id ${trajectoryId} must be "<groupId>/<sample>" (${parsed.data.groupId}/${parsed.data.sample})` };
    }
    return { group: parsed.data };
}
/** The group id of a prompt in a run; `tag` tells apart a prompt submitted again (another epoch, say). */
export function groupId(runId, qid, tag) {
    return tag ? `${runId}/${qid}@${tag}` : `${runId}/${qid}`;
}
//# sourceMappingURL=group-membership.js.map