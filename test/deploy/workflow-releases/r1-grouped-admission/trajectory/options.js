export const DEFAULT_ROLLOUT_OPTIONS = {
    turns: 5,
    earlyStop: false,
    discount: 1,
    rewardScaling: 1,
    rewardBias: 0,
    maxNewTokens: 1024,
    temperature: 1,
    layout: 'seed',
};
/** Fills defaults and rejects values the seed's semantics cannot mean. Throws a plain Error with the field. */
export function resolveRolloutOptions(partial = {}) {
    const options = { ...DEFAULT_ROLLOUT_OPTIONS, ...stripUndefined(partial) };
    const problems = [];
    if (!Number.isInteger(options.turns) || options.turns < 1 || options.turns > 64)
        problems.push(`turns must be an integer in [1, 64], got ${options.turns}`);
    if (!(options.discount > 0 && options.discount <= 1))
        problems.push(`discount must be in (0, 1], got ${options.discount}`);
    if (!Number.isFinite(options.rewardScaling))
        problems.push(`rewardScaling must be finite, got ${options.rewardScaling}`);
    if (!Number.isFinite(options.rewardBias))
        problems.push(`rewardBias must be finite, got ${options.rewardBias}`);
    if (!Number.isInteger(options.maxNewTokens) || options.maxNewTokens < 1)
        problems.push(`maxNewTokens must be a positive integer, got ${options.maxNewTokens}`);
    if (!(options.temperature >= 0))
        problems.push(`temperature must be >= 0, got ${options.temperature}`);
    if (options.layout !== 'seed' && options.layout !== 'concat')
        problems.push(`layout must be "seed" or "concat", got ${String(options.layout)}`);
    if (problems.length > 0)
        throw new Error(`invalid rollout options: ${problems.join('; ')}`);
    return options;
}
function stripUndefined(value) {
    return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined));
}
