/**
 * GRPO advantages as a trainer computes them from a group: per turn, each sample's return-to-go minus the group's
 * mean at that turn, divided by the group's standard deviation (plus ε so a group that all agrees gets 0, not NaN).
 * Samples that have no turn t (early stop, failures) take no part in turn t's statistics.
 */
export function groupAdvantages(returns: readonly (readonly number[])[], epsilon = 1e-6): (number | null)[][] {
  const turns = Math.max(0, ...returns.map((r) => r.length));
  const columns = Array.from({ length: turns }, (_, t) => {
    const values = returns.flatMap((r) => (t < r.length ? [r[t]!] : []));
    const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
    const std = Math.sqrt(values.reduce((sum, v) => sum + (v - mean) ** 2, 0) / values.length);
    return { mean, std };
  });
  return returns.map((r) => columns.map((column, t) => (t < r.length ? (r[t]! - column.mean) / (column.std + epsilon) : null)));
}
