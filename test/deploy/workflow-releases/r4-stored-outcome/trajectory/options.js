import { z } from 'zod';
import { problemLines, readableIssue, rule } from './schema-problems.js';
/**
 * How one trajectory is rolled out and scored, with the ranges the seed's semantics can mean. The one
 * definition of these rules: `resolveRolloutOptions`, the request schema and its JSON Schema all use it.
 */
export const rolloutOptionsSchema = z.strictObject({
    turns: z.number(rule('must be an integer in [1, 64]')).int().min(1).max(64)
        .meta({ description: 'Turns per trajectory. The seed always runs all of them.', default: 5 }),
    earlyStop: z.boolean(rule('must be true or false'))
        .meta({ description: 'Stop after the first correct turn (AReaL-lite behaviour); off in the seed.', default: false }),
    discount: z.number(rule('must be in (0, 1]')).gt(0).max(1)
        .meta({ description: 'γ in the returns-to-go R_t = r_t + γ·R_{t+1}.', default: 1 }),
    rewardScaling: z.number(rule('must be finite')).meta({ description: 'The scaling in r_t = ((success_t − 0.5)·2 − bias)·scaling.', default: 1 }),
    rewardBias: z.number(rule('must be finite')).meta({ description: 'The bias in r_t = ((success_t − 0.5)·2 − bias)·scaling.', default: 0 }),
    maxNewTokens: z.number(rule('must be a positive integer')).int().min(1)
        .meta({ description: 'Per-turn token budget, counted from the turn\'s start.', default: 1024 }),
    temperature: z.number(rule('must be >= 0')).min(0).meta({ description: 'Sampling temperature.', default: 1 }),
    layout: z.enum(['seed', 'concat'], rule('must be "seed" or "concat"'))
        .meta({ description: '`seed`: one sequence per turn repeating the history. `concat`: one sequence, AReaL-lite style.', default: 'seed' }),
    answerExtraction: z.enum(['stated', 'math-verify'], rule('must be "stated" or "math-verify"'))
        .meta({
        description: 'What the verifier takes as the answer: `stated` (a box or a final-answer statement, or an output that is only an answer) '
            + 'or `math-verify` (also the last expression of unmarked prose, as Math-Verify does). See src/verifier/POLICIES.md.',
        default: 'stated',
    }),
});
export const DEFAULT_ROLLOUT_OPTIONS = {
    turns: 5,
    earlyStop: false,
    discount: 1,
    rewardScaling: 1,
    rewardBias: 0,
    maxNewTokens: 1024,
    temperature: 1,
    layout: 'seed',
    answerExtraction: 'stated',
};
/** Fills defaults and rejects values the seed's semantics cannot mean. Throws a plain Error naming each field. */
export function resolveRolloutOptions(partial = {}) {
    const parsed = rolloutOptionsSchema.safeParse({ ...DEFAULT_ROLLOUT_OPTIONS, ...stripUndefined(partial) }, { error: readableIssue });
    if (!parsed.success)
        throw new Error(`invalid rollout options: ${problemLines(parsed.error.issues, 'options', ' ').join('; ')}`);
    return parsed.data;
}
function stripUndefined(value) {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
