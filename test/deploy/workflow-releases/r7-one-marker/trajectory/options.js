import { z } from 'zod';
import { DEFAULT_SAMPLING } from './sampling.js';
import { problemLines, readableIssue, rule } from './schema-problems.js';
const TOP_K_RULE = 'must be -1 (off) or a positive integer';
/**
 * How one trajectory is rolled out and scored, with the ranges the seed's semantics can mean. The one
 * definition of these rules: `resolveRolloutOptions`, the request schema and its JSON Schema all use it.
 */
export const rolloutOptionsSchema = z.strictObject({
    turns: z
        .number(rule('must be an integer in [1, 64]'))
        .int()
        .min(1)
        .max(64)
        .meta({ description: 'Turns per trajectory. The seed always runs all of them.', default: 5 }),
    earlyStop: z
        .boolean(rule('must be true or false'))
        .meta({ description: 'Stop after the first correct turn (AReaL-lite behaviour); off in the seed.', default: false }),
    discount: z.number(rule('must be in (0, 1]')).gt(0).max(1).meta({ description: 'γ in the returns-to-go R_t = r_t + γ·R_{t+1}.', default: 1 }),
    rewardScaling: z.number(rule('must be finite')).meta({
        description: "The scaling in r_t = (reward_t − bias)·scaling, reward_t the environment's (math and code: +1 correct, −1 otherwise, the seed's ((success_t − 0.5)·2).",
        default: 1,
    }),
    rewardBias: z.number(rule('must be finite')).meta({ description: 'The bias in r_t = (reward_t − bias)·scaling.', default: 0 }),
    maxNewTokens: z
        .number(rule('must be a positive integer'))
        .int()
        .min(1)
        .meta({ description: "Per-turn token budget, counted from the turn's start.", default: 1024 }),
    // The sampling parameters (src/trajectory/sampling.ts): each is sent on every request, stored and exported.
    temperature: z
        .number(rule('must be >= 0'))
        .min(0)
        .meta({ description: 'Sampling temperature; 0 is greedy decoding.', default: DEFAULT_SAMPLING.temperature }),
    topP: z.number(rule('must be in (0, 1]')).gt(0).max(1).meta({ description: 'Top-p (nucleus) sampling; 1 is off.', default: DEFAULT_SAMPLING.topP }),
    // -1, not 0, is off: SGLang refuses top_k 0 (vLLM takes both).
    topK: z
        .number(rule(TOP_K_RULE))
        .int()
        .min(-1)
        .refine((k) => k !== 0, rule(TOP_K_RULE))
        .meta({ description: 'Top-k sampling; -1 is off (every token).', default: DEFAULT_SAMPLING.topK, not: { const: 0 } }),
    minP: z.number(rule('must be in [0, 1]')).min(0).max(1).meta({
        description: 'Min-p sampling: tokens at least this fraction as probable as the most probable one; 0 is off.',
        default: DEFAULT_SAMPLING.minP,
    }),
    repetitionPenalty: z.number(rule('must be in (0, 2]')).gt(0).max(2).meta({
        description: 'Repetition penalty on tokens already in the context (vLLM: prompt and output; SGLang refuses it, see docs/behaviour-logprobs.md); 1 is off.',
        default: DEFAULT_SAMPLING.repetitionPenalty,
    }),
    layout: z
        .enum(['seed', 'concat'], rule('must be "seed" or "concat"'))
        .meta({ description: '`seed`: one sequence per turn repeating the history. `concat`: one sequence, AReaL-lite style.', default: 'seed' }),
    answerExtraction: z.enum(['stated', 'math-verify'], rule('must be "stated" or "math-verify"')).meta({
        description: 'What the verifier takes as the answer: `stated` (a box or a final-answer statement, or an output that is only an answer) ' +
            'or `math-verify` (also the last expression of unmarked prose, as Math-Verify does). See src/verifier/POLICIES.md.',
        default: 'stated',
    }),
    turnAffinity: z.boolean(rule('must be true or false')).meta({
        description: "Send each turn after the first to the inference server that generated the one before (its prefix is in that server's cache), " +
            'falling back to any server after `timeouts.affinityFallbackSeconds`. Off: every turn goes to the shared GPU queue.',
        default: true,
    }),
});
export const DEFAULT_ROLLOUT_OPTIONS = {
    turns: 5,
    earlyStop: false,
    discount: 1,
    rewardScaling: 1,
    rewardBias: 0,
    maxNewTokens: 1024,
    ...DEFAULT_SAMPLING,
    layout: 'seed',
    answerExtraction: 'stated',
    turnAffinity: true,
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
//# sourceMappingURL=options.js.map