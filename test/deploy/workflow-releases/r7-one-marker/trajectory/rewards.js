/** Per-turn reward as the seed shapes it: ((success − 0.5)·2 − bias)·scaling, so ±1 by default. */
export function shapeReward(success, bias, scaling) {
    return ((Number(success) - 0.5) * 2 - bias) * scaling;
}
/** Per-turn reward from an environment's reward (release 5): (reward − bias)·scaling; the seed's ±1 gives shapeReward's values. */
export function shapeEnvironmentReward(reward, bias, scaling) {
    return (reward - bias) * scaling;
}
/** Returns-to-go R_t = r_t + γ·R_{t+1}, computed back to front as the seed does. */
export function returnsToGo(rewards, discount) {
    const returns = [...rewards];
    for (let t = returns.length - 2; t >= 0; t--) {
        returns[t] = returns[t] + discount * returns[t + 1];
    }
    return returns;
}
//# sourceMappingURL=rewards.js.map